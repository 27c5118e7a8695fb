package guidellm

import (
	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/peers"
)

// runFlags are `guidellm run`'s options (v0.7).
var runFlags = []peers.Flag{}

func parseRun(argv []string) (*plan, error) {
	return nil, cmdline.Usagef("guidellm run: not yet")
}
