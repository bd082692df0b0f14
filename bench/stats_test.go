package main

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestMedianAndPercentile(t *testing.T) {
	cases := []struct {
		name     string
		xs       []float64
		med, p99 float64
	}{
		{"empty", nil, 0, 0},
		{"one", []float64{3}, 3, 3},
		{"odd", []float64{5, 1, 3}, 3, 5},
		{"even", []float64{4, 1, 3, 2}, 2.5, 4},
		{"hundred", hundred(), 50.5, 99},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := median(tc.xs); got != tc.med {
				t.Errorf("median = %v, want %v", got, tc.med)
			}
			if got := percentile(tc.xs, 99); got != tc.p99 {
				t.Errorf("p99 = %v, want %v", got, tc.p99)
			}
		})
	}
	xs := []float64{3, 1, 2}
	median(xs)
	percentile(xs, 50)
	if xs[0] != 3 || xs[1] != 1 {
		t.Error("median or percentile reordered its input")
	}
}

func hundred() []float64 {
	xs := make([]float64, 100)
	for i := range xs {
		xs[i] = float64(100 - i)
	}
	return xs
}

func TestMillis(t *testing.T) {
	got := millis([]time.Duration{1500 * time.Microsecond, 2 * time.Second})
	if got[0] != 1.5 || got[1] != 2000 {
		t.Fatalf("millis = %v", got)
	}
}

func TestRunBatchCountsAndStopsOnError(t *testing.T) {
	ctx := t.Context()
	b, err := runBatch(ctx, 50, 4, func(context.Context, int) error { return nil })
	if err != nil || len(b.Latencies) != 50 || b.CutShort || b.rate() <= 0 {
		t.Fatalf("batch = %d latencies, cut %v, err %v", len(b.Latencies), b.CutShort, err)
	}
	boom := errors.New("boom")
	b, err = runBatch(ctx, 50, 4, func(_ context.Context, i int) error {
		if i == 10 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || !b.CutShort {
		t.Fatalf("err = %v, cut %v; want boom and a cut batch", err, b.CutShort)
	}
}
