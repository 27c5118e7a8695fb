package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
)

// TestCtrlCWhileLoadingDataset: SIGINT while `surge profile` reads its
// dataset (from a FIFO whose writer has stalled: without the interrupt the
// read would wait forever) exits 130 at once, through the whole command
// line and its signal handling.
func TestCtrlCWhileLoadingDataset(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "trace.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	stall := make(chan struct{})
	defer close(stall)
	wrote := make(chan bool, 1)
	go func() {
		// Opening waits for surge to open the file, which it does after its
		// signal handling is in place: the SIGINT below cannot reach a
		// process that would die of it.
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			wrote <- false
			return
		}
		defer w.Close()
		_, err = w.WriteString(strings.Repeat(`{"timestamp": 0, "input_length": 600, "output_length": 8}`+"\n", 1000))
		wrote <- err == nil
		<-stall
	}()
	code := make(chan int, 1)
	go func() {
		code <- run([]string{"surge", "profile", "--url", "http://127.0.0.1:9", "--model", "m", "--ui", "none",
			"--input-file", fifo, "--custom-dataset-type", "mooncake_trace", "--output-artifact-dir", filepath.Join(dir, "out")})
	}()
	select {
	case ok := <-wrote:
		if !ok {
			t.Fatal("could not write the FIFO")
		}
	case got := <-code:
		t.Fatalf("surge exited %d before reading its dataset", got)
	}
	sent := time.Now()
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-code:
		if got != cmdline.ExitInterrupted {
			t.Errorf("exit %d after SIGINT while loading, want %d", got, cmdline.ExitInterrupted)
		}
		t.Logf("exited %v after SIGINT", time.Since(sent))
	case <-time.After(20 * time.Second):
		t.Fatal("surge did not exit within 20 s of SIGINT while loading its dataset")
	}
}
