package cmdline

// HistoryConfig holds the flags that say where a run is remembered and
// what the server costs (docs/history.md).
type HistoryConfig struct {
	// History is --history: the database the run is appended to ("": the
	// default, $XDG_DATA_HOME/surge/history.db or
	// ~/.local/share/surge/history.db).
	History string
	// NoHistory is --no-history: the run is recorded nowhere.
	NoHistory bool
	// HistoryLabel is --history-label: the run's name in the history.
	HistoryLabel string
	// CostPerHour is --cost-per-hour: the server's price in US dollars an
	// hour (0: not priced).
	CostPerHour float64
}
