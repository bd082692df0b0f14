package stream_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/dawn-go/dawn/stream"
)

// planUpdate is a typical plan_update event with four todos.
func planUpdate() stream.Event {
	todos := []map[string]string{
		{"content": "Read the customer's ticket and the account history", "status": "completed"},
		{"content": "Check the billing system for duplicate charges", "status": "in_progress"},
		{"content": "Draft a refund proposal", "status": "pending"},
		{"content": "Reply to the customer with next steps", "status": "pending"},
	}
	e := stream.New("plan_update", map[string]any{"todos": todos})
	e.ID = 42
	return e
}

func BenchmarkAppendSSE(b *testing.B) {
	e := planUpdate()
	buf := stream.AppendSSE(nil, e)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf = stream.AppendSSE(buf[:0], e)
	}
}

func BenchmarkLogPublish(b *testing.B) {
	for _, subscribers := range []int{0, 8} {
		b.Run(fmt.Sprintf("subscribers=%d", subscribers), func(b *testing.B) {
			e := stream.New("chunk", map[string]string{"content": "token"})
			// A fresh log every chunk keeps memory flat however large b.N is;
			// each chunk's subscribers drain it before the next starts.
			const chunk = 1 << 16
			b.ReportAllocs()
			n := 0
			for n < b.N {
				l := stream.NewLog()
				var wg sync.WaitGroup
				for range subscribers {
					s := l.Subscribe(0)
					wg.Go(func() {
						for {
							if _, err := s.Next(context.Background()); err != nil {
								return
							}
						}
					})
				}
				for i := 0; i < chunk && n < b.N; i++ {
					l.Publish(e)
					n++
				}
				l.Close()
				wg.Wait()
			}
		})
	}
}

func BenchmarkReader(b *testing.B) {
	var wire bytes.Buffer
	const events = 1000
	e := planUpdate()
	for i := range events {
		e.ID = int64(i + 1)
		wire.Write(stream.AppendSSE(nil, e))
	}
	data := wire.Bytes()
	b.SetBytes(int64(len(data) / events))
	b.ReportAllocs()
	var r *stream.Reader
	src := bytes.NewReader(nil)
	for i := 0; i < b.N; i++ {
		if i%events == 0 {
			src.Reset(data)
			r = stream.NewReader(src)
		}
		if _, err := r.Next(); err != nil {
			b.Fatal(err)
		}
	}
}
