package workspace

import (
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"path"
	"strings"

	"github.com/dawn-go/dawn/capabilities"
)

// ThreadRoutes serves a thread's workspace (capabilities.HTTPRoutes):
//
//	GET /threads/:id/files         {"workspace":"thread"|"folder","files":[{path,size,modified_at}],"truncated"?}
//	GET /threads/:id/files/*path   the file's content
//
// A thread the host does not know (or another user's) gets the host's
// 404; a thread whose route has no workspace 404 workspace_not_found; a
// missing file 404 file_not_found; a bad path 400 invalid_path.
func (marker) ThreadRoutes(host capabilities.ThreadHost) []capabilities.ThreadRoute {
	return []capabilities.ThreadRoute{
		{Method: http.MethodGet, Path: "files", Handler: func(w http.ResponseWriter, r *http.Request) error {
			return serveList(w, r, host)
		}},
		{Method: http.MethodGet, Path: "files/*", Handler: func(w http.ResponseWriter, r *http.Request) error {
			return serveFile(w, r, host)
		}},
	}
}

// threadBackend opens the workspace of the request's thread.
func threadBackend(r *http.Request, host capabilities.ThreadHost) (*space, backend, func(), error) {
	view, err := host.Thread(r.Context(), r.PathValue("id"))
	if err != nil {
		return nil, nil, nil, err
	}
	sp := spaceOf(view.Route)
	if sp == nil {
		return nil, nil, nil, &capabilities.HTTPError{Status: http.StatusNotFound, Kind: "workspace_not_found", Msg: "this thread's route has no workspace; add workspace: thread to its agent.md"}
	}
	b, _, closeFn, err := sp.open(view.Values)
	return sp, b, closeFn, err
}

// spaceOf returns the workspace of route p, or nil.
func spaceOf(p *capabilities.Prepared) *space {
	if p == nil {
		return nil
	}
	if t, ok := p.Tool(ReadFile).(*fileTool); ok {
		return t.sp
	}
	return nil
}

type listBody struct {
	Workspace string  `json:"workspace"`
	Files     []Entry `json:"files"`
	Truncated bool    `json:"truncated,omitempty"`
}

func serveList(w http.ResponseWriter, r *http.Request, host capabilities.ThreadHost) error {
	sp, b, closeFn, err := threadBackend(r, host)
	if err != nil {
		return err
	}
	defer closeFn()
	files, err := b.files(r.Context())
	if err != nil {
		return err
	}
	body := listBody{Workspace: Thread, Files: files}
	if sp.dir != "" {
		body.Workspace = "folder"
	}
	if len(files) > MaxListed {
		body.Files, body.Truncated = files[:MaxListed], true
	}
	if body.Files == nil {
		body.Files = []Entry{}
	}
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(body)
}

func serveFile(w http.ResponseWriter, r *http.Request, host capabilities.ThreadHost) error {
	_, rest, ok := strings.Cut(r.URL.Path, "/threads/"+r.PathValue("id")+"/files/")
	if !ok {
		rest = ""
	}
	_, b, closeFn, err := threadBackend(r, host)
	if err != nil {
		return err
	}
	defer closeFn()
	name, err := CleanFile(rest)
	if err != nil {
		return &capabilities.HTTPError{Status: http.StatusBadRequest, Kind: "invalid_path", Msg: err.Error()}
	}
	data, err := b.read(name)
	switch {
	case errors.Is(err, errNotFound) || errors.Is(err, errIsDir):
		return &capabilities.HTTPError{Status: http.StatusNotFound, Kind: "file_not_found", Msg: err.Error()}
	case err != nil:
		return &capabilities.HTTPError{Status: http.StatusUnprocessableEntity, Kind: "file_unreadable", Msg: err.Error()}
	}
	ctype := mime.TypeByExtension(path.Ext(name))
	if ctype == "" || strings.HasPrefix(ctype, "text/html") {
		// HTML the model wrote is shown as text, never run in a browser.
		ctype = "text/plain; charset=utf-8"
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; sandbox")
	_, err = w.Write(data)
	return err
}
