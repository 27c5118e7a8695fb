package cmdline

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

// TestGenAIPerfFlagsSayWhatToUse: each of GenAI-Perf's flags surge lacks
// is a usage error that names it GenAI-Perf's and says what surge takes
// instead; every flag the hint names is one surge takes, and none of the
// table's names is (a flag implemented later must leave the table).
func TestGenAIPerfFlagsSayWhatToUse(t *testing.T) {
	kinds := flagKinds(ProfileFlags(&Config{}))
	for name, hint := range genaiPerf {
		if _, ok := kinds[name]; ok {
			t.Errorf("--%s is a surge flag now: drop its GenAI-Perf hint", name)
		}
		flag := "--" + name
		if len(name) == 1 {
			flag = "-" + name
		}
		_, err := ParseProfile(flag, "10000")
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), flag+" is GenAI-Perf's flag") || !strings.HasSuffix(err.Error(), hint) {
			t.Errorf("%s: %v, want a usage error naming it GenAI-Perf's and saying %q", flag, err, hint)
		}
		for _, named := range regexp.MustCompile(`--([a-z-]+)`).FindAllStringSubmatch(hint, -1) {
			if _, ok := kinds[named[1]]; !ok {
				t.Errorf("%s's hint names --%s, which surge does not take", flag, named[1])
			}
		}
	}
}
