package server

import (
	"log/slog"
	"strconv"
	"time"

	"github.com/dawn-go/dawn/internal/crons"
)

// cronOptions reads the scheduler's settings: DAWN_CRON_INTERVAL, how
// often each server looks for due ticks (a Go duration, default 5s), and
// DAWN_CRON_SECONDS=1, a test-only setting that lets schedules carry a
// leading seconds field. A value that cannot be read is logged and the
// default kept.
func cronOptions(env func(string) string, logger *slog.Logger) crons.Options {
	o := crons.Options{Logger: logger}
	if env == nil {
		return o
	}
	if v := env("DAWN_CRON_INTERVAL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			logger.Warn("DAWN_CRON_INTERVAL must be a positive duration such as 5s; using the default", "value", v, "default", crons.DefaultInterval)
		} else {
			o.Interval = d
		}
	}
	o.Seconds, _ = strconv.ParseBool(env("DAWN_CRON_SECONDS"))
	return o
}
