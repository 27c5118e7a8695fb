package datasets

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/surgebench/surge/datasets/tokenizer/hub"
)

// PublicSource is where a public dataset's file lives on the Hugging Face
// Hub: the file AIPerf downloads for the same --public-dataset name.
type PublicSource struct {
	// Repo is the Hub dataset repository, File the file in it, Revision
	// the branch, tag or commit.
	Repo, File, Revision string
	// MaxBytes bounds the download.
	MaxBytes int64
	// Sends says in a line what the dataset sends.
	Sends string
}

// PublicSources are the public datasets surge downloads, by name.
var PublicSources = map[string]PublicSource{
	PublicShareGPT: {
		Repo: "anon8231489123/ShareGPT_Vicuna_unfiltered", File: ShareGPTCacheName, Revision: "main",
		MaxBytes: 2 << 30,
		Sends:    "every human→gpt pair of each kept conversation as a turn, its output capped at the gpt reply's length",
	},
}

// publicFile returns the local path of public dataset name: the file in
// the old surge cache folder when it is there, else the Hugging Face
// cache's copy, downloaded once (through o.Hub, reporting o.Progress).
func publicFile(o Options, name string) (string, error) {
	src, ok := PublicSources[name]
	if !ok {
		return "", optionErrorf("PublicDataset", "%q: unknown (known: %s)", name, strings.Join(publicNames(), ", "))
	}
	if dir, err := os.UserCacheDir(); err == nil {
		if p := filepath.Join(dir, "surge", src.File); fileExists(p) {
			return p, nil
		}
	}
	ho := o.Hub
	if ho.Revision == "" {
		ho.Revision = src.Revision
	}
	if ho.MaxBytes == 0 {
		ho.MaxBytes = src.MaxBytes
	}
	if ho.Timeout == 0 {
		ho.Timeout = 30 * time.Minute // a large file on a slow link; a dead one fails at the client's 10 s timeouts
	}
	if ho.Progress == nil {
		ho.Progress = o.Progress
	}
	p, _, err := hub.Fetch(context.Background(), hub.Dataset, src.Repo, src.File, ho)
	if err != nil {
		reason := fmt.Sprintf("%s: cannot get %s from the Hugging Face Hub: %v", name, src.File, err)
		if errors.Is(err, hub.ErrNotCached) {
			reason = fmt.Sprintf("%s: %s is not in the Hugging Face cache and downloads are off: %v", name, src.File, err)
		}
		reason += fmt.Sprintf(" (offline? set HF_ENDPOINT to a Hub mirror, or download https://huggingface.co/datasets/%s/resolve/%s/%s and pass it as the input file)",
			src.Repo, src.Revision, src.File)
		return "", &OptionError{Option: "PublicDataset", Reason: reason, Err: err}
	}
	return p, nil
}

func publicNames() []string {
	names := make([]string, 0, len(PublicSources))
	for n := range PublicSources {
		names = append(names, n)
	}
	return names
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
