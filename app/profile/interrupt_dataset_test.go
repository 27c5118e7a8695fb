package profile

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
)

// TestInterruptWhileLoadingDataset: cancelling the run's context while the
// dataset is read (a FIFO whose writer has stalled, so the read blocks)
// ends Run promptly with the cancellation, not a usage error, before
// anything is sent or written.
func TestInterruptWhileLoadingDataset(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "trace.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	stall := make(chan struct{})
	defer close(stall)
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // waits for the reader
		if err != nil {
			return
		}
		defer w.Close()
		line := `{"timestamp": 0, "input_length": 600, "output_length": 8}` + "\n"
		if _, err := w.WriteString(strings.Repeat(line, 1000)); err != nil {
			return
		}
		wrote <- struct{}{}
		<-stall
	}()

	server := &apptest.Server{Tokens: 3}
	srv := httptest.NewServer(server)
	defer srv.Close()
	c := apptest.RunConfig(srv.URL, filepath.Join(dir, "out"))
	c.InputFile, c.CustomDatasetType = fifo, "mooncake_trace"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	result := make(chan error, 1)
	go func() {
		_, err := runConfig(ctx, c, io.Discard, io.Discard)
		result <- err
	}()
	<-wrote
	cancel()
	select {
	case err := <-result:
		var ue *cmdline.UsageError
		if !errors.Is(err, context.Canceled) || errors.As(err, &ue) || !strings.Contains(err.Error(), "interrupted while loading the dataset") {
			t.Errorf("Run = %v, want the interruption (context.Canceled, not a usage error)", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return within 20 s of the cancel")
	}
	if _, err := os.Stat(c.ArtifactDir); err == nil {
		t.Errorf("the artifact folder was made for a run interrupted before it started")
	}
	if n := server.N.Load(); n > 0 {
		t.Errorf("%d requests sent", n)
	}
}
