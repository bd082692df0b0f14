package runner

import (
	"errors"

	"github.com/dawn-go/dawn/internal/store"
)

// errorText is the text of a run's error that its output and record keep,
// which clients read. A store that cannot be reached is said so without the
// driver's words, which name the database's host, user and name; the log
// has them.
func errorText(err error) string {
	if errors.Is(err, store.ErrUnavailable) {
		return store.ErrUnavailable.Error() + " (its database cannot be reached); the last saved step is kept"
	}
	return err.Error()
}
