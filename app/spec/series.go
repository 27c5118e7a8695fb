package spec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/internal/bounded"
	"github.com/surgebench/surge/loadgen/schedule"
)

// maxSeriesFile bounds --request-rate-series' file.
const maxSeriesFile = 4 << 20

// parseRateSeries reads --request-rate-series: AIPerf's JSON file
// ({"points": [{"time_s": 0, "qps": 1}, …]}), or an inline list of
// seconds:rate points. It is the profile's rate, so it excludes
// --request-rate, a rate ramp, a fixed schedule and user-centric mode, and
// takes one --concurrency cap at most.
func parseRateSeries(s *Spec, c *cmdline.Config) error {
	v := strings.TrimSpace(c.RequestRateSeries)
	if v == "" {
		return nil
	}
	switch {
	case c.RequestRate != "":
		return cmdline.Usagef("--request-rate-series is the profile's rate: drop --request-rate")
	case c.RateRamp != 0:
		return cmdline.Usagef("--request-rate-series sets the rate over time: drop --request-rate-ramp-duration (give the rise as points)")
	case c.FixedSchedule:
		return cmdline.Usagef("--request-rate-series and --fixed-schedule both time the requests: give one")
	case c.UserCentricRate > 0 || c.NumUsers > 0:
		return cmdline.Usagef("--request-rate-series cannot be combined with --user-centric-rate")
	case c.Search != nil || c.ControlAddr != "":
		return cmdline.Usagef("--request-rate-series plans the run's rate: not with a live or search session")
	case len(s.Load.Concs) > 1:
		return cmdline.Usagef("--request-rate-series runs one stage: give one --concurrency cap, not a list")
	}
	var pts []schedule.RatePoint
	var err error
	if st, serr := os.Stat(v); serr == nil && !st.IsDir() {
		pts, err = readSeriesFile(v)
	} else if strings.ContainsAny(v, ":") && !strings.ContainsAny(v, "{[/\\") {
		pts, err = parseSeriesList(v)
	} else {
		err = errors.New("no such file, and not a list of seconds:rate points")
	}
	if err != nil {
		return cmdline.Usagef("--request-rate-series %s: %v", v, err)
	}
	if _, err := schedule.Series(c.ArrivalPattern, pts, c.Smoothness, c.Seed); err != nil {
		return &cmdline.UsageError{Err: cmdline.ForFlags(err, map[string]string{"series": "--request-rate-series",
			"pattern": "--arrival-pattern", "smoothness": "--arrival-smoothness"})}
	}
	s.Load.RateSeries = pts
	return nil
}

// seriesDoc is AIPerf's rate series file.
type seriesDoc struct {
	Points []struct {
		TimeS *float64 `json:"time_s"`
		QPS   *float64 `json:"qps"`
	} `json:"points"`
}

// readSeriesFile reads AIPerf's JSON rate series.
func readSeriesFile(path string) ([]schedule.RatePoint, error) {
	b, err := bounded.ReadFile(context.Background(), path, maxSeriesFile)
	if err != nil {
		return nil, err
	}
	var doc seriesDoc
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, errors.New(`want a JSON object {"points": [{"time_s": 0, "qps": 1}, …]}: ` + err.Error())
	}
	var pts []schedule.RatePoint
	for i, p := range doc.Points {
		if p.TimeS == nil || p.QPS == nil {
			return nil, errors.New("point " + strconv.Itoa(i) + ": want time_s and qps")
		}
		at, err := seriesTime(*p.TimeS)
		if err != nil {
			return nil, errors.New("point " + strconv.Itoa(i) + ": " + err.Error())
		}
		pts = append(pts, schedule.RatePoint{At: at, QPS: *p.QPS})
	}
	return pts, nil
}

// parseSeriesList reads "0:1,60:7,120:40" (seconds:rate).
func parseSeriesList(v string) ([]schedule.RatePoint, error) {
	var pts []schedule.RatePoint
	for _, item := range strings.Split(v, ",") {
		ts, qs, ok := strings.Cut(strings.TrimSpace(item), ":")
		t, terr := strconv.ParseFloat(strings.TrimSpace(ts), 64)
		q, qerr := strconv.ParseFloat(strings.TrimSpace(qs), 64)
		if !ok || terr != nil || qerr != nil {
			return nil, errors.New("point " + strconv.Quote(item) + ": want seconds:rate")
		}
		at, err := seriesTime(t)
		if err != nil {
			return nil, errors.New("point " + strconv.Quote(item) + ": " + err.Error())
		}
		pts = append(pts, schedule.RatePoint{At: at, QPS: q})
	}
	return pts, nil
}

// seriesTime is a point's time in seconds as a duration.
func seriesTime(sec float64) (time.Duration, error) {
	if math.IsNaN(sec) || math.IsInf(sec, 0) || sec*float64(time.Second) > math.MaxInt64 {
		return 0, errors.New("time_s is not a number of seconds")
	}
	return time.Duration(sec * float64(time.Second)), nil
}
