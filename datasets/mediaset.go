package datasets

import (
	"fmt"

	"github.com/surgebench/surge/datasets/media"
)

// mediaLines describes a dataset's images and audio for the Report: how
// many each kind, how many distinct encodings they share and their bytes
// (nothing when it has none).
func mediaLines(d *Dataset) []string {
	var all media.Stats
	distinct := map[*byte]bool{}
	held := 0
	for i := range d.Conversations {
		for j := range d.Conversations[i].Turns {
			parts := d.Conversations[i].Turns[j].Media
			all.Add(parts)
			for _, p := range parts {
				if len(p.JSON) > 0 && !distinct[&p.JSON[0]] {
					distinct[&p.JSON[0]] = true
					held += len(p.JSON)
				}
			}
		}
	}
	if all.Images+all.Audio == 0 {
		return nil
	}
	size := fmt.Sprintf("%d KiB", held>>10)
	if held >= 10<<20 {
		size = fmt.Sprintf("%d MiB", held>>20)
	}
	return []string{fmt.Sprintf("dataset: %d images and %d audio clips (%.1f s) in its turns, %d distinct encodings held once (%s)",
		all.Images, all.Audio, all.Seconds, len(distinct), size)}
}
