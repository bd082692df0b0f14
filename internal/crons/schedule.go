package crons

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Schedule is a parsed cron schedule in its time zone.
type Schedule struct {
	s cron.Schedule
}

// standard reads five fields: minute, hour, day of month, month, day of
// week, and the @hourly, @daily... descriptors.
var standard = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// withSeconds also reads an optional leading seconds field: a test-only
// setting (see Options.Seconds).
var withSeconds = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Parse reads a five-field schedule ("*/15 9-17 * * 1-5") in time zone tz
// (an IANA name such as "Europe/Paris"; "" is UTC). seconds also takes a
// sixth, leading, seconds field. The error names what is wrong.
func Parse(schedule, tz string, seconds bool) (Schedule, error) {
	if strings.HasPrefix(strings.TrimSpace(schedule), "TZ=") || strings.HasPrefix(strings.TrimSpace(schedule), "CRON_TZ=") {
		return Schedule{}, fmt.Errorf("schedule %q: give the time zone in the timezone field, not in the schedule", schedule)
	}
	loc := time.UTC
	if tz != "" {
		l, err := time.LoadLocation(tz)
		if err != nil {
			return Schedule{}, fmt.Errorf("timezone %q is not a time zone: use an IANA name such as \"Europe/Paris\" or \"UTC\"", tz)
		}
		loc = l
	}
	p := standard
	if seconds {
		p = withSeconds
	}
	s, err := p.Parse(schedule)
	if err != nil {
		return Schedule{}, fmt.Errorf("schedule %q: %v: write five fields, minute hour day-of-month month day-of-week, such as \"0 9 * * 1-5\"", schedule, err)
	}
	if spec, ok := s.(*cron.SpecSchedule); ok {
		spec.Location = loc
	}
	return Schedule{s: s}, nil
}

// Next is the first tick of the schedule after t; the zero time when
// there is none.
func (s Schedule) Next(t time.Time) time.Time {
	return s.s.Next(t)
}
