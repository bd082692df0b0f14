package inspector

import "testing"

func TestAcceptsGzip(t *testing.T) {
	tests := []struct {
		header string
		want   bool
	}{
		{"", false},
		{"gzip", true},
		{"GZIP", true},
		{"deflate, gzip;q=1.0, *;q=0.5", true},
		{"br, deflate", false},
		{"gzip;q=0", false},
		{"gzip; q=0.000", false},
		{"*", true},
		{"identity", false},
	}
	for _, tt := range tests {
		if got := acceptsGzip(tt.header); got != tt.want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", tt.header, got, tt.want)
		}
	}
}

func FuzzAcceptsGzip(f *testing.F) {
	f.Add("gzip, deflate, br")
	f.Add("gzip;q=0")
	f.Fuzz(func(t *testing.T, header string) {
		got := acceptsGzip(header)
		if header == "" && got {
			t.Fatal("an empty Accept-Encoding must not take gzip")
		}
	})
}
