package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/ownership"
	"github.com/dawn-go/dawn/internal/store"
)

// forgetStopWait bounds how long ForgetUser waits for the person's runs
// in flight to stop before it erases them anyway: a run still going then
// finds its rows gone, and its next write fails.
const forgetStopWait = 30 * time.Second

// Forgotten is what ForgetUser erased: the rows deleted, by table, and
// the runs in flight it stopped.
type Forgotten struct {
	Counts      map[string]int `json:"counts"`
	StoppedRuns int            `json:"stopped_runs"`
}

// ForgetUser erases everything user owns (store.Forgetter): it first
// stops their runs in flight, here or on another replica of a shared
// store, and waits for them to end so that none writes after the
// erasure; then it deletes their rows in one transaction, with one audit
// entry of who asked (ctx's identity), when, a digest of the user id and
// the counts; then it frees what capabilities hold of their threads
// outside the store (capabilities.ThreadCleaner). Forgetting a user with
// nothing left erases nothing and still records the request.
func (m *Manager) ForgetUser(ctx context.Context, user string) (Forgotten, error) {
	f, ok := m.store.(store.Forgetter)
	if !ok {
		return Forgotten{}, errors.New("this store cannot forget a user")
	}
	if user == "" {
		return Forgotten{}, fmt.Errorf("%w: name the user to forget", store.ErrInvalid)
	}
	threads, err := m.ownedThreads(ctx, user)
	if err != nil {
		return Forgotten{}, err
	}
	// No queued run may start once the runs in flight stop.
	for _, id := range threads {
		m.dropQueued(ctx, id)
	}
	stopped := m.stopRuns(ctx, threads)
	sum := sha256.Sum256([]byte(user))
	detail, _ := json.Marshal(map[string]any{"subject": "sha256:" + hex.EncodeToString(sum[:]), "stopped_runs": stopped})
	audit := store.AuditEntry{Action: "forget", Outcome: "ok", Detail: detail}
	if id, ok := capabilities.IdentityFrom(ctx); ok {
		audit.User, audit.Service = id.User, id.Service
	}
	e := store.Erasure{User: user, ItemNamespace: []string{ownership.UsersLabel, ownership.UserLabel(user)}, AppKeyPrefix: UserPrefix + url.PathEscape(user) + "/"}
	counts, err := f.ForgetUser(context.WithoutCancel(ctx), e, audit)
	if err != nil {
		return Forgotten{}, err
	}
	for _, id := range threads {
		m.cleanThread(ctx, id)
	}
	m.logger.Info("forgot a user", "subject", "sha256:"+hex.EncodeToString(sum[:6]), "threads", counts["threads"], "stopped_runs", stopped)
	return Forgotten{Counts: counts, StoppedRuns: stopped}, nil
}

// ownedThreads lists the ids of every thread user owns.
func (m *Manager) ownedThreads(ctx context.Context, user string) ([]string, error) {
	var ids []string
	for offset := 0; ; offset += 1000 {
		page, err := m.threads.SearchThreads(ctx, store.ThreadQuery{Owner: user, SortBy: "thread_id", SortOrder: "asc", Limit: 1000, Offset: offset})
		if err != nil {
			return nil, err
		}
		for _, t := range page {
			ids = append(ids, t.ID)
		}
		if len(page) < 1000 {
			return ids, nil
		}
	}
}

// stopRuns cancels the runs in flight on threads, here and on other
// replicas, and waits for them to end, at most forgetStopWait; it
// returns how many it stopped.
func (m *Manager) stopRuns(ctx context.Context, threads []string) int {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), forgetStopWait)
	defer cancel()
	stopped := 0
	for _, id := range threads {
		if run, _ := m.Cancel(id); run != nil {
			stopped++
			select {
			case <-run.Done():
			case <-ctx.Done():
			}
			continue
		}
		if r, ok := m.RemoteRun(ctx, id); ok {
			stopped++
			if _, err := m.WaitRemote(ctx, r, "cancel"); err != nil {
				m.logger.Warn("a run of a user being forgotten did not stop in time; its rows are erased anyway and its next write fails", "thread", id, "run", r.ID, "err", err)
			}
		}
	}
	return stopped
}

// dropQueued takes the queued runs of a thread off its queue; the
// erasure deletes any it misses.
func (m *Manager) dropQueued(ctx context.Context, threadID string) {
	queued, err := m.queue.QueuedRuns(ctx, threadID)
	if err != nil {
		m.logger.Warn("cannot read the queue of a thread of a user being forgotten; the erasure deletes it", "thread", threadID, "err", err)
		return
	}
	for _, q := range queued {
		if err := m.queue.DequeueRun(ctx, q.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
			m.logger.Warn("cannot take a queued run of a user being forgotten off its queue; the erasure deletes it", "thread", threadID, "run", q.ID, "err", err)
		}
	}
}

// cleanThread frees what capabilities hold of a deleted thread outside
// the store.
func (m *Manager) cleanThread(ctx context.Context, threadID string) {
	for _, mk := range m.app.Load().Config.Markers {
		if c, ok := mk.(capabilities.ThreadCleaner); ok {
			if err := c.ThreadDeleted(ctx, threadID); err != nil {
				m.logger.Error("freeing a deleted thread's resources failed", "thread", threadID, "capability", mk.Name(), "err", err)
			}
		}
	}
}
