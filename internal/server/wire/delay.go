package wire

import (
	"strconv"
	"time"
)

// MaxAfterSeconds is the longest delay a run request's after_seconds may
// ask for: a year. A run to start later than that is a cron's job, and a
// start time must fit the store's clock (nanoseconds since 1970, which
// end in 2262).
const MaxAfterSeconds = 365 * 24 * 60 * 60

// NotBefore turns a run request's after_seconds into the time the run may
// start, counted from now; zero for a run that starts now. A negative
// delay, or one longer than MaxAfterSeconds, is a 400 naming the field.
func NotBefore(afterSeconds float64, now time.Time) (time.Time, error) {
	switch {
	case afterSeconds < 0:
		return time.Time{}, BadBody("after_seconds must be 0 or more seconds to wait before the run starts")
	case afterSeconds > MaxAfterSeconds:
		return time.Time{}, BadBody("after_seconds must be at most " + strconv.Itoa(MaxAfterSeconds) + " (a year), not " +
			strconv.FormatFloat(afterSeconds, 'g', -1, 64) + ": schedule a run that far ahead with a cron (POST /runs/crons)")
	case afterSeconds == 0:
		return time.Time{}, nil
	}
	return now.Add(time.Duration(afterSeconds * float64(time.Second))), nil
}
