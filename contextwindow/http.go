package contextwindow

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/dawn-go/dawn/capabilities"
)

// maxServed bounds the bytes one GET of a stored output returns; a larger
// output is read a page at a time with offset and limit.
const maxServed = 64 << 20

// ThreadRoutes serves the tool outputs stored with a thread
// (capabilities.HTTPRoutes):
//
//	GET /threads/:id/tool-outputs/:output_id[?offset=N&limit=M]
//
// answers the output's bytes from offset (0) on, at most limit (all, up
// to 64 MiB), as text/plain, with its whole size in the header
// Dawn-Total-Bytes. A thread the host does not know (or another user's)
// gets the host's 404; an output the thread does not keep 404
// tool_output_not_found; a bad offset or limit 400 invalid_range.
func (marker) ThreadRoutes(host capabilities.ThreadHost) []capabilities.ThreadRoute {
	return []capabilities.ThreadRoute{{Method: http.MethodGet, Path: "tool-outputs/*", Handler: func(w http.ResponseWriter, r *http.Request) error {
		return serveOutput(w, r, host)
	}}}
}

func serveOutput(w http.ResponseWriter, r *http.Request, host capabilities.ThreadHost) error {
	threadID := r.PathValue("id")
	if _, err := host.Thread(r.Context(), threadID); err != nil {
		return err
	}
	_, id, _ := strings.Cut(r.URL.Path, "/threads/"+threadID+"/tool-outputs/")
	notFound := &capabilities.HTTPError{Status: http.StatusNotFound, Kind: "tool_output_not_found", Msg: "this thread keeps no tool output " + strconv.Quote(id) + "; use the id of a preview in the thread's messages"}
	oh, ok := host.(capabilities.ToolOutputHost)
	if !ok || id == "" {
		return notFound
	}
	offset, limit, err := outputRange(r)
	if err != nil {
		return err
	}
	page, found, err := oh.ToolOutputs(threadID).Read(r.Context(), id, offset, limit)
	switch {
	case err != nil:
		return err
	case !found:
		return notFound
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Dawn-Total-Bytes", strconv.FormatInt(page.Total, 10))
	_, err = w.Write(page.Data)
	return err
}

// outputRange reads the offset and limit query parameters.
func outputRange(r *http.Request) (offset, limit int64, err error) {
	q := r.URL.Query()
	bad := &capabilities.HTTPError{Status: http.StatusBadRequest, Kind: "invalid_range", Msg: "offset must be a whole number of 0 or more and limit one of 1 or more"}
	limit = maxServed
	if s := q.Get("offset"); s != "" {
		if offset, err = strconv.ParseInt(s, 10, 64); err != nil || offset < 0 {
			return 0, 0, bad
		}
	}
	if s := q.Get("limit"); s != "" {
		if limit, err = strconv.ParseInt(s, 10, 64); err != nil || limit < 1 {
			return 0, 0, bad
		}
		limit = min(limit, maxServed)
	}
	return offset, limit, nil
}
