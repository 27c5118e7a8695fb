// Package e2e runs surge as a user does, through its binary: every
// command of README.md and docs/ (docs_test.go), every surface that reads
// from outside against the hostile kit (hostile_test.go), and every
// endpoint type with its defaults. It holds tests only; they read the
// repository's files from its root, as the documents name them.
package e2e
