package langgraph

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// routeCrons adds the LangGraph SDK's client.crons endpoints.
func (s *dialect) routeCrons(h wire.Mux) {
	h.Add(http.MethodPost, "/runs/crons", s.createCron(false), markLG)
	h.Add(http.MethodPost, "/threads/:id/runs/crons", s.createCron(true), markLG)
	h.Add(http.MethodPost, "/runs/crons/search", s.searchCrons, markLG)
	h.Add(http.MethodPost, "/runs/crons/count", s.countCrons, markLG)
	h.Add(http.MethodPatch, "/runs/crons/:cron", s.updateCron, markLG)
	h.Add(http.MethodDelete, "/runs/crons/:cron", s.deleteCron, markLG)
}

// cronFields are the members of a cron request that are the cron's own;
// every other member is the run request each tick starts (its payload).
var cronFields = []string{"schedule", "timezone", "end_time", "on_run_completed", "enabled"}

// lgCronSettings are a cron request's own members.
type lgCronSettings struct {
	Schedule       *string `json:"schedule"`
	Timezone       *string `json:"timezone"`
	EndTime        *string `json:"end_time"`
	OnRunCompleted string  `json:"on_run_completed"`
	Enabled        *bool   `json:"enabled"`
}

// lgCron is the LangGraph Cron object.
type lgCron struct {
	CronID         string          `json:"cron_id"`
	AssistantID    string          `json:"assistant_id"`
	ThreadID       *string         `json:"thread_id"`
	OnRunCompleted string          `json:"on_run_completed,omitempty"`
	EndTime        *time.Time      `json:"end_time"`
	Schedule       string          `json:"schedule"`
	Timezone       string          `json:"timezone,omitempty"`
	CreatedAt      time.Time       `json:"created_at"`
	UpdatedAt      time.Time       `json:"updated_at"`
	Payload        json.RawMessage `json:"payload"`
	UserID         *string         `json:"user_id"`
	NextRunDate    *time.Time      `json:"next_run_date"`
	Metadata       json.RawMessage `json:"metadata"`
	Enabled        bool            `json:"enabled"`
}

func cronObject(c store.Cron) lgCron {
	o := lgCron{CronID: c.ID, AssistantID: c.AssistantID, OnRunCompleted: c.OnRunCompleted, Schedule: c.Schedule, Timezone: c.Timezone,
		CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt, Payload: c.Payload, Metadata: c.Metadata, Enabled: c.Enabled}
	if c.ThreadID != "" {
		o.ThreadID = &c.ThreadID
	}
	if !c.EndTime.IsZero() {
		o.EndTime = &c.EndTime
	}
	if !c.NextRunAt.IsZero() {
		o.NextRunDate = &c.NextRunAt
	}
	return o
}

// splitCron reads a cron request: the cron's own members, and the rest as
// the payload, checked as the run request it is.
func (s *dialect) splitCron(c echo.Context) (lgCronSettings, map[string]json.RawMessage, error) {
	var set lgCronSettings
	fields := map[string]json.RawMessage{}
	if err := wire.Decode(c, &fields); err != nil {
		return set, nil, err
	}
	own := map[string]json.RawMessage{}
	for _, k := range cronFields {
		if v, ok := fields[k]; ok {
			own[k] = v
			delete(fields, k)
		}
	}
	for k, v := range fields {
		if isNull(v) {
			delete(fields, k)
		}
	}
	data, _ := json.Marshal(own)
	if err := json.Unmarshal(data, &set); err != nil {
		return set, nil, wire.BadBody("a cron's schedule, timezone and end_time are strings and enabled is a boolean: " + wire.JSONError(err, "the body"))
	}
	if err := oneOf("on_run_completed", set.OnRunCompleted, "delete", "keep"); err != nil {
		return set, nil, err
	}
	return set, fields, nil
}

// checkPayload checks a cron's run request as a run on a thread would be
// checked, and returns it as stored with its assistant_id.
func (s *dialect) checkPayload(ctx context.Context, fields map[string]json.RawMessage) (json.RawMessage, string, error) {
	payload, err := json.Marshal(fields)
	if err != nil {
		return nil, "", err
	}
	var body lgRunBody
	if err := json.Unmarshal(payload, &body); err != nil {
		return nil, "", wire.BadBody("the cron's run request is not a LangGraph run request: " + wire.JSONError(err, "the body"))
	}
	if !isNull(body.Command) {
		return nil, "", wire.BadBody("command is not supported in a cron: a cron starts runs with input")
	}
	if _, _, err := s.lgRunOf(ctx, body, uuid.NewString()); err != nil {
		return nil, "", err
	}
	if err := s.host.CheckWebhook(ctx, body.Webhook); err != nil {
		return nil, "", err
	}
	return payload, body.AssistantID, nil
}

// when reads the schedule, time zone and end of a cron and says its
// first tick after now.
func (s *dialect) when(c *store.Cron, now time.Time) error {
	sched, err := s.host.ParseSchedule(c.Schedule, c.Timezone)
	if err != nil {
		return wire.BadBody(err.Error())
	}
	c.NextRunAt = sched.Next(now)
	if c.NextRunAt.IsZero() {
		return wire.BadBody("schedule " + strconv.Quote(c.Schedule) + " never fires: no day matches its day of month and month (such as 30 2, February 30); fix those fields")
	}
	if !c.EndTime.IsZero() && c.NextRunAt.After(c.EndTime) {
		c.NextRunAt = time.Time{}
	}
	return nil
}

// endTime reads end_time: an RFC 3339 time, or null for none.
func endTime(v *string) (time.Time, error) {
	if v == nil || *v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, *v)
	if err != nil {
		return t, wire.BadBody("end_time must be an RFC 3339 time such as \"2030-01-01T00:00:00Z\", not " + *v)
	}
	return t.UTC(), nil
}

// createCron is POST /runs/crons (a new thread per run) and
// /threads/:id/runs/crons (each run on that thread).
func (s *dialect) createCron(onThread bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		set, fields, err := s.splitCron(c)
		if err != nil {
			return err
		}
		cron := store.Cron{ID: uuid.NewString(), Enabled: set.Enabled == nil || *set.Enabled, OnRunCompleted: set.OnRunCompleted}
		if onThread {
			cron.ThreadID, cron.OnRunCompleted = c.Param("id"), ""
			if _, err := s.host.GetThread(ctx, cron.ThreadID); err != nil {
				return err
			}
		} else if cron.OnRunCompleted == "" {
			cron.OnRunCompleted = "delete"
		}
		if set.Schedule == nil {
			return wire.BadBody("schedule is required: five fields, minute hour day-of-month month day-of-week, such as \"0 9 * * 1-5\"")
		}
		cron.Schedule = *set.Schedule
		if set.Timezone != nil {
			cron.Timezone = *set.Timezone
		}
		if cron.EndTime, err = endTime(set.EndTime); err != nil {
			return err
		}
		if cron.Payload, cron.AssistantID, err = s.checkPayload(ctx, fields); err != nil {
			return err
		}
		cron.Metadata = fields["metadata"]
		if err := s.when(&cron, time.Now()); err != nil {
			return err
		}
		made, err := s.host.CreateCron(ctx, cron)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, cronObject(made))
	}
}

// cronSearch is the body of POST /runs/crons/search and /count.
type cronSearch struct {
	AssistantID string   `json:"assistant_id"`
	ThreadID    string   `json:"thread_id"`
	Enabled     *bool    `json:"enabled"`
	Limit       int      `json:"limit"`
	Offset      int      `json:"offset"`
	SortBy      string   `json:"sort_by"`
	SortOrder   string   `json:"sort_order"`
	Select      []string `json:"select"`
}

func (q cronSearch) query() store.CronQuery {
	return store.CronQuery{AssistantID: q.AssistantID, ThreadID: q.ThreadID, Enabled: q.Enabled,
		SortBy: q.SortBy, SortOrder: q.SortOrder, Limit: q.Limit, Offset: q.Offset}
}

func (s *dialect) searchCrons(c echo.Context) error {
	var q cronSearch
	if err := wire.Decode(c, &q); err != nil {
		return err
	}
	found, err := s.host.SearchCrons(c.Request().Context(), q.query())
	if err != nil {
		return err
	}
	out := make([]any, len(found))
	for i, cr := range found {
		if out[i], err = selectFields(cronObject(cr), q.Select); err != nil {
			return err
		}
	}
	return c.JSON(http.StatusOK, out)
}

func (s *dialect) countCrons(c echo.Context) error {
	var q cronSearch
	if err := wire.Decode(c, &q); err != nil {
		return err
	}
	n, err := s.host.CountCrons(c.Request().Context(), q.query())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, n)
}

// updateCron is PATCH /runs/crons/:cron: the members sent replace the
// cron's; input, config, context, metadata and the other run members
// replace those of its payload. A new schedule, time zone or end, or a
// cron enabled again, fires next at its first tick from now.
func (s *dialect) updateCron(c echo.Context) error {
	set, fields, err := s.splitCron(c)
	if err != nil {
		return err
	}
	end, err := endTime(set.EndTime)
	if err != nil {
		return err
	}
	now, ctx := time.Now(), c.Request().Context()
	updated, err := s.host.UpdateCron(ctx, c.Param("cron"), func(cr *store.Cron) error {
		return s.changeCron(ctx, cr, set, fields, end, now)
	})
	if err != nil {
		return cronError(c.Param("cron"), err)
	}
	return c.JSON(http.StatusOK, cronObject(updated))
}

// changeCron applies an update to a stored cron.
func (s *dialect) changeCron(ctx context.Context, cr *store.Cron, set lgCronSettings, fields map[string]json.RawMessage, end, now time.Time) error {
	retime := false
	if set.Schedule != nil {
		cr.Schedule, retime = *set.Schedule, true
	}
	if set.Timezone != nil {
		cr.Timezone, retime = *set.Timezone, true
	}
	if set.EndTime != nil {
		cr.EndTime, retime = end, true
	}
	if set.Enabled != nil {
		retime = retime || (*set.Enabled && !cr.Enabled)
		cr.Enabled = *set.Enabled
	}
	if set.OnRunCompleted != "" && cr.ThreadID == "" {
		cr.OnRunCompleted = set.OnRunCompleted
	}
	if len(fields) > 0 {
		payload := map[string]json.RawMessage{}
		if err := json.Unmarshal(cr.Payload, &payload); err != nil {
			return err
		}
		for k, v := range fields {
			payload[k] = v
		}
		var err error
		if cr.Payload, cr.AssistantID, err = s.checkPayload(ctx, payload); err != nil {
			return err
		}
		if m, ok := fields["metadata"]; ok {
			cr.Metadata = m
		}
	}
	if retime {
		return s.when(cr, now)
	}
	return nil
}

func (s *dialect) deleteCron(c echo.Context) error {
	if err := s.host.DeleteCron(c.Request().Context(), c.Param("cron")); err != nil {
		return cronError(c.Param("cron"), err)
	}
	return c.NoContent(http.StatusNoContent)
}

// cronError is the answer to err from changing or deleting cron id: the
// store's not found is a 404 cron_not_found (it would otherwise read as
// a missing thread).
func cronError(id string, err error) error {
	var we *wire.Error
	if errors.Is(err, store.ErrNotFound) && !errors.As(err, &we) {
		return wire.NewError(http.StatusNotFound, "cron_not_found", "cron "+strconv.Quote(id)+" not found: POST /runs/crons/search lists the crons")
	}
	return err
}

// StartCron starts the run of a tick of cron c, as a background run
// (POST /threads/:id/runs) on its thread, or on a new thread that is
// deleted once the run ends unless the cron keeps it.
func (s *dialect) StartCron(ctx context.Context, c store.Cron) error {
	var body lgRunBody
	if err := json.Unmarshal(c.Payload, &body); err != nil {
		return err
	}
	threadID := c.ThreadID
	if threadID == "" {
		threadID = uuid.NewString()
		body.IfNotExists = "create"
	}
	run, req, err := s.lgRunOf(ctx, body, threadID)
	if err != nil {
		return err
	}
	started, _, err := s.startLG(ctx, run, req, body)
	if err != nil {
		return err
	}
	if started != nil && c.ThreadID == "" && c.OnRunCompleted != "keep" {
		go func() {
			<-started.Done()
			if err := s.host.DeleteThread(context.Background(), threadID); err != nil && !errors.Is(err, store.ErrNotFound) {
				s.host.Logger().Warn("cannot delete the thread of a cron's run", "cron", c.ID, "thread", threadID, "err", err)
			}
		}()
	}
	return nil
}
