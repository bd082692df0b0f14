package telemetry_test

import (
	"context"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/telemetry"
)

func TestFromEnv(t *testing.T) {
	for _, c := range []struct {
		name string
		env  map[string]string
		on   bool
		err  string
	}{
		{name: "nothing set is off", env: nil},
		{name: "an OTLP endpoint turns it on", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, on: true},
		{name: "a traces endpoint alone", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, on: true},
		{name: "a metrics exporter alone", env: map[string]string{"OTEL_METRICS_EXPORTER": "otlp"}, on: true},
		{name: "grpc", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, on: true},
		{name: "none for every signal wins over an endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "none"}},
		{name: "logs alone (the audit log)", env: map[string]string{"OTEL_LOGS_EXPORTER": "otlp"}, on: true},
		{name: "the SDK disabled", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "true"}},
		{name: "an exporter Dawn lacks", env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, err: `OTEL_TRACES_EXPORTER="zipkin"`},
		{name: "an unknown protocol", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"}, err: `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL="http/json"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v) // the exporters read the process environment
			}
			tel, shutdown, err := telemetry.FromEnv(context.Background(), func(k string) string { return c.env[k] })
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want one naming %s", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer shutdown(context.Background())
			if (tel != nil) != c.on {
				t.Fatalf("telemetry on = %v, want %v", tel != nil, c.on)
			}
		})
	}
}
