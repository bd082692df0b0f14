package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/dawn-go/dawn/internal/tokens"
)

// modelPair is the two chat completion requests one workload run sends to
// the model: the one that gets the writeTodos call and the one, with the
// tool result, that gets the answer. They are read back from aimock's
// journal, so they are byte for byte what the server sent (less aimock's own
// bookkeeping key).
type modelPair struct {
	plan, answer []byte
}

// capturePair reads the latest run's two requests from the journal of the
// aimock at mock. Call it right after one sequential run.
func capturePair(ctx context.Context, mock string) (modelPair, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, mock+"/__aimock/journal?path=/v1/chat/completions", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return modelPair{}, fmt.Errorf("reading aimock's journal: %w", err)
	}
	defer resp.Body.Close()
	var entries []struct {
		Body map[string]json.RawMessage `json:"body"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&entries); err != nil {
		return modelPair{}, fmt.Errorf("aimock's journal: %w", err)
	}
	var pair modelPair
	for i := len(entries) - 1; i >= 0 && (pair.plan == nil || pair.answer == nil); i-- {
		body := entries[i].Body
		delete(body, "_endpointType")
		data, err := json.Marshal(body)
		if err != nil {
			return modelPair{}, err
		}
		switch {
		case hasToolMessage(body["messages"]) && pair.answer == nil:
			pair.answer = data
		case !hasToolMessage(body["messages"]) && pair.plan == nil:
			pair.plan = data
		}
	}
	if pair.plan == nil || pair.answer == nil {
		return modelPair{}, errors.New("aimock's journal does not hold a run's two chat requests; is the server using this aimock?")
	}
	return pair, nil
}

func hasToolMessage(raw json.RawMessage) bool {
	var msgs []struct {
		Role string `json:"role"`
	}
	_ = json.Unmarshal(raw, &msgs)
	for _, m := range msgs {
		if m.Role == "tool" {
			return true
		}
	}
	return false
}

// pairTimer sends a modelPair straight to aimock over a keep-alive client.
type pairTimer struct {
	http *http.Client
	url  string // .../v1/chat/completions
	pair modelPair
}

func newPairTimer(mock string, pair modelPair) *pairTimer {
	tr := &http.Transport{MaxIdleConnsPerHost: 4, DisableCompression: true}
	return &pairTimer{http: &http.Client{Transport: tr, Timeout: time.Minute}, url: mock + "/v1/chat/completions", pair: pair}
}

// once sends both requests, one after the other, as the server does.
func (p *pairTimer) once(ctx context.Context, _ int) error {
	for _, body := range [][]byte{p.pair.plan, p.pair.answer} {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer test")
		resp, err := p.http.Do(req)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("aimock answered %d to a replayed request", resp.StatusCode)
		}
	}
	return nil
}

// promptTokens counts, with o200k_base (gpt-4o-mini's encoding), what the
// model reads of a chat request body: each message's text and tool-call
// arguments, and the tool definitions as JSON. Providers add a few tokens
// of framing per message, which this leaves out.
func promptTokens(body []byte) int {
	var req struct {
		Messages []struct {
			Content   any `json:"content"`
			ToolCalls []struct {
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools json.RawMessage `json:"tools"`
	}
	if json.Unmarshal(body, &req) != nil {
		return 0
	}
	n := 0
	for _, m := range req.Messages {
		if text, ok := m.Content.(string); ok {
			n += tokens.Count(text)
		}
		for _, c := range m.ToolCalls {
			n += tokens.Count(c.Function.Name) + tokens.Count(c.Function.Arguments)
		}
	}
	if len(req.Tools) > 0 {
		n += tokens.Count(string(req.Tools))
	}
	return n
}
