// Package wire gives a load generator timestamps the client cannot distort:
// TCP connections whose reads also report the kernel's receive time of the
// data they delivered (SO_TIMESTAMPNS on Linux), a dialer and a listener
// that hand out such connections, and the mapping of those CLOCK_REALTIME
// stamps onto a run's monotonic clock.
//
// Why: a reader stamped in user space is late by however long its goroutine
// waited to be scheduled. Under a continuous-batching burst (one token for
// every running stream in the same step) that is up to a burst later, and
// it inflates TTFT and ITL by the client's own load. The kernel stamps each
// segment when it arrives, whoever reads it when.
//
// On other systems (and for connections not dialled here: HTTP/2, a custom
// client) a Conn reports no kernel time and callers fall back to the time
// of the read, saying so (see Supported).
package wire
