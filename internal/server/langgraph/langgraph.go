package langgraph

import (
	"net/http"

	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/labstack/echo/v4"
)

// dialect serves the LangGraph dialect on a wire.Host. known remembers
// the runs it started, for the calls that later name them.
type dialect struct {
	host  wire.Host
	known lgRuns
	// defaults are LANGGRAPH_CONFIG's configs of default assistants.
	defaults envDefaults
}

// Mount mounts the LangGraph dialect on h: its own endpoints, and the
// requests to Dawn's endpoints that are in the dialect (Claim; see
// negotiate.go). The thread and state reads (GET /threads/:id and
// /threads/:id/state) are in the shape both dialects read, built here.
func Mount(h wire.Host) {
	s := &dialect{host: h, defaults: readEnvDefaults(h)}
	// A LangGraph client in a browser reads the run's id from
	// Content-Location (useStream keeps it to rejoin the run), where to
	// rejoin from Location, and the next page of assistants from
	// X-Pagination-Next.
	h.Expose("Content-Location", "Location", "X-Pagination-Next")
	h.Claim(http.MethodPost, "/threads", createsThread, s.lgCreateThread)
	h.Claim(http.MethodGet, "/threads/:id/runs", listsRuns, s.lgListRuns, markLG)
	h.Claim(http.MethodPost, "/threads/:id/runs/wait", namesAssistant, s.lgRunWait, markLG)
	h.Claim(http.MethodPost, "/threads/:id/runs/stream", namesAssistant, s.lgRunStream, markLG)
	h.Claim(http.MethodGet, "/threads/:id/runs/:run/stream", joinsStream, s.lgJoinStream, markLG)
	h.Add(http.MethodGet, "/threads/:id", s.getThread)
	h.Add(http.MethodGet, "/threads/:id/state", s.lgGetState)
	h.Add(http.MethodGet, "/threads/:id/history", s.getHistory)
	s.routeLangGraph(h)
	s.routeCrons(h)
	h.StartCrons(s)
	s.routeStore(h)
}

// routeLangGraph adds the endpoints only the LangGraph dialect has. markLG
// gives their errors LangGraph's "detail".
func (s *dialect) routeLangGraph(h wire.Mux) {
	h.Add(http.MethodPost, "/assistants", s.createAssistant, markLG)
	h.Add(http.MethodPost, "/assistants/search", s.searchAssistants, markLG)
	h.Add(http.MethodPost, "/assistants/count", s.countAssistants, markLG)
	h.Add(http.MethodGet, "/assistants/:assistant", s.getAssistant, markLG)
	h.Add(http.MethodPatch, "/assistants/:assistant", s.updateAssistant, markLG)
	h.Add(http.MethodDelete, "/assistants/:assistant", s.deleteAssistant, markLG)
	h.Add(http.MethodPost, "/assistants/:assistant/versions", s.assistantVersions, markLG)
	h.Add(http.MethodPost, "/assistants/:assistant/latest", s.setLatestAssistant, markLG)
	h.Add(http.MethodGet, "/assistants/:assistant/schemas", s.assistantSchemas, markLG)
	h.Add(http.MethodGet, "/assistants/:assistant/graph", s.assistantGraph, markLG)
	h.Add(http.MethodGet, "/assistants/:assistant/subgraphs", s.assistantSubgraphs, markLG)
	h.Add(http.MethodGet, "/assistants/:assistant/subgraphs/:namespace", s.assistantSubgraphs, markLG)
	h.Add(http.MethodGet, "/info", s.serverInfo, markLG)
	h.Add(http.MethodGet, "/ok", serverOK, markLG)

	h.Add(http.MethodPost, "/threads/search", s.searchThreads, markLG)
	h.Add(http.MethodPost, "/threads/count", s.countThreads, markLG)
	h.Add(http.MethodGet, "/threads/:id/state/:checkpoint", s.getCheckpoint, markLG)
	h.Add(http.MethodPost, "/threads/:id/state/checkpoint", s.postCheckpoint, markLG)
	h.Add(http.MethodPost, "/threads/:id/history", s.threadHistory, markLG)
	h.Add(http.MethodGet, "/threads/:id/stream", s.lgThreadStream, markLG)

	h.Add(http.MethodPost, "/threads/:id/runs", s.lgCreateRun, markLG, wire.NotFoundAs(func(c echo.Context) error { return noThread(c.Param("id")) }))
	h.Add(http.MethodGet, "/threads/:id/runs/:run", s.lgGetRun, markLG)
	h.Add(http.MethodGet, "/threads/:id/runs/:run/join", s.lgJoinRun, markLG)
	h.Add(http.MethodPost, "/threads/:id/runs/:run/cancel", s.lgCancelRun, markLG)

	// What Dawn does not do answers with why, not a bare 404 or 405.
	h.Add(http.MethodPatch, "/threads/:id", s.patchThread, markLG)
	h.Add(http.MethodPost, "/threads/:id/copy", s.copyThread, markLG)
	h.Add(http.MethodPost, "/threads/:id/state", s.updateState, markLG)
	addUnsupported(h, http.MethodPatch, "/threads/:id/state", "checkpoint metadata cannot be changed")
	addUnsupported(h, http.MethodDelete, "/threads/:id/runs/:run", "a run cannot be deleted on its own; delete its thread")
	h.Add(http.MethodPost, "/runs/batch", s.batchRuns, markLG)

	h.Add(http.MethodPost, "/runs", s.lgStateless(statelessBackground), markLG)
	h.Add(http.MethodPost, "/runs/stream", s.lgStateless(statelessStream), markLG)
	h.Add(http.MethodPost, "/runs/wait", s.lgStateless(statelessWait), markLG)
	h.Add(http.MethodGet, "/runs/:run/stream", s.joinRunByID, markLG)
}
