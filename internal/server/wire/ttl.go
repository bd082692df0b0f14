package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/dawn-go/dawn/internal/store"
)

// ttlExample is what a client should write, in the errors ThreadTTL
// returns.
const ttlExample = `write "ttl": {"ttl": 60, "strategy": "delete"} (minutes, a number above 0) or leave it out`

// ThreadTTL reads the ttl of a thread create or update, LangGraph's
// {"ttl": minutes, "strategy": "delete"} (a bare number of minutes is
// read as that object, as the SDK sends it): how long the thread lives
// after its last update, or 0 when raw is absent or null. Strategy
// "keep_latest", which LangGraph names but Dawn does not build, and any
// other value are refused with a 400 that says what to write.
func ThreadTTL(raw json.RawMessage) (time.Duration, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return 0, nil
	}
	var minutes float64
	if raw[0] == '{' {
		var spec struct {
			TTL      *float64 `json:"ttl"`
			Strategy *string  `json:"strategy"`
		}
		if err := json.Unmarshal(raw, &spec); err != nil {
			return 0, BadBody("ttl: " + ttlExample + " (" + err.Error() + ")")
		}
		if err := checkStrategy(spec.Strategy); err != nil {
			return 0, err
		}
		if spec.TTL == nil {
			return 0, BadBody("ttl.ttl is missing: " + ttlExample)
		}
		minutes = *spec.TTL
	} else if err := json.Unmarshal(raw, &minutes); err != nil {
		return 0, BadBody("ttl must be an object or a number of minutes: " + ttlExample)
	}
	max := store.MaxTTL.Minutes()
	if math.IsNaN(minutes) || minutes <= 0 || minutes > max {
		return 0, BadBody(fmt.Sprintf("ttl %v is not a number of minutes above 0 and at most %v: %s", minutes, max, ttlExample))
	}
	d := time.Duration(minutes * float64(time.Minute))
	if d <= 0 {
		return 0, BadBody(fmt.Sprintf("ttl %v minutes is too short: %s", minutes, ttlExample))
	}
	return d, nil
}

// checkStrategy accepts a ttl's strategy when it is absent or "delete".
func checkStrategy(s *string) error {
	switch {
	case s == nil || *s == "delete":
		return nil
	case *s == "keep_latest":
		return BadBody(`ttl.strategy "keep_latest" is not built: Dawn deletes a thread whose ttl ran out, with its runs and checkpoints; write "strategy": "delete" or leave it out`)
	default:
		return BadBody(fmt.Sprintf(`ttl.strategy %q is not a strategy: write "strategy": "delete" or leave it out`, *s))
	}
}
