package a2a

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/labstack/echo/v4"
)

// ProtocolVersion is the A2A version this wire speaks: the one the Go SDK
// (a2a-go v0.3) and the JavaScript SDK (@a2a-js/sdk 0.3) speak.
const ProtocolVersion = "0.3.0"

// card answers GET /a2a/{route}/.well-known/agent-card.json.
func (s *endpoint) card(c echo.Context) error {
	escaped := strings.TrimPrefix(c.Request().URL.EscapedPath(), Prefix)
	rest, ok := strings.CutSuffix(escaped, CardPath)
	if !ok {
		return wire.NewError(http.StatusNotFound, "not_found", fmt.Sprintf("GET %s%s: a route's agent card is at %s/{route}%s; its JSON-RPC endpoint takes POST", Prefix, escaped, Prefix, CardPath))
	}
	key, err := pathRoute(rest)
	if err != nil {
		return err
	}
	p, err := s.resolve(key)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, s.cardOf(c, key, p))
}

// rootCard answers GET /.well-known/agent-card.json: the card of the
// route ?route= names, or of the app's one route.
func (s *endpoint) rootCard(c echo.Context) error {
	key := c.QueryParam("route")
	if key == "" {
		served := s.served()
		if len(served) != 1 {
			return wire.NewError(http.StatusNotFound, "route_not_found", fmt.Sprintf("this server has %d agents, one per route: name one with ?route=, like %s?route=/support/acme, or read every card at GET %s", len(served), CardPath, Prefix))
		}
		key = served[0].Route.ID
	}
	key = "/" + strings.Trim(key, "/")
	p, err := s.resolve(key)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, s.cardOf(c, key, p))
}

// list answers GET /a2a: the card of every route that runs on its own.
func (s *endpoint) list(c echo.Context) error {
	cards := []*a2a.AgentCard{}
	for _, p := range s.served() {
		cards = append(cards, s.cardOf(c, p.Route.ID, p))
	}
	return c.JSON(http.StatusOK, map[string]any{"agents": cards})
}

// cardOf is the agent card of route p, served at key (a route id or a
// concrete path) on the server c reached. Its URL ends with a slash, so
// that clients that resolve the card's path against it as a URL (the
// JavaScript SDK does) find it below the agent, not beside.
func (s *endpoint) cardOf(c echo.Context, key string, p *capabilities.Prepared) *a2a.AgentCard {
	desc := p.Route.Agent.Description
	if desc == "" {
		desc = "The Dawn route " + p.Route.ID + "."
	}
	card := &a2a.AgentCard{
		Name:               p.Route.ID,
		Description:        desc,
		URL:                c.Scheme() + "://" + c.Request().Host + Prefix + escapeRoute(key) + "/",
		PreferredTransport: a2a.TransportProtocolJSONRPC,
		ProtocolVersion:    ProtocolVersion,
		Version:            "1",
		Capabilities:       a2a.AgentCapabilities{Streaming: true, PushNotifications: s.host.SendsWebhooks()},
		DefaultInputModes:  []string{"text/plain", "application/json"},
		DefaultOutputModes: []string{"text/plain", "application/json"},
		Skills:             skillsOf(p, desc),
	}
	card.SecuritySchemes, card.Security = security(s.host.AuthMode())
	return card
}

// escapeRoute writes a route id or path as a URL path, each segment
// escaped: /support/[tenant] is /support/%5Btenant%5D.
func escapeRoute(key string) string {
	segs := strings.Split(strings.Trim(key, "/"), "/")
	for i, seg := range segs {
		segs[i] = url.PathEscape(seg)
	}
	return "/" + strings.Join(segs, "/")
}

// skillsOf is what route p can do: the route itself (its description, its
// capabilities as tags, and the items of a seeded plan as examples), then
// each of its tools.
func skillsOf(p *capabilities.Prepared, desc string) []a2a.AgentSkill {
	main := a2a.AgentSkill{ID: p.Route.ID, Name: p.Route.ID, Description: desc, Tags: []string{"route"}}
	for _, c := range p.Capabilities {
		main.Tags = append(main.Tags, c.Name)
		main.Examples = append(main.Examples, seedOf(c.Details)...)
	}
	skills := []a2a.AgentSkill{main}
	for _, t := range p.Tools {
		spec := t.Spec()
		skills = append(skills, a2a.AgentSkill{ID: "tool:" + spec.Name, Name: spec.Name, Description: spec.Description, Tags: []string{"tool"}})
	}
	return skills
}

// seedOf is the content of each item of a capability's seed list, when
// its details hold one ({"seed":[{"content":…}]}), as the routes listing
// shows it.
func seedOf(details any) []string {
	if details == nil {
		return nil
	}
	raw, err := json.Marshal(details)
	if err != nil {
		return nil
	}
	var d struct {
		Seed []struct {
			Content string `json:"content"`
		} `json:"seed"`
	}
	if json.Unmarshal(raw, &d) != nil {
		return nil
	}
	var out []string
	for _, item := range d.Seed {
		if item.Content != "" {
			out = append(out, item.Content)
		}
	}
	return out
}

// Security scheme names a card offers.
const (
	schemeBearer = "bearer"
	schemeAPIKey = "apiKey"
)

// security is the card's security schemes for the server's auth mode:
// none for "none"; a bearer token (a JWT, or the service key) otherwise,
// and the X-Api-Key header where the service key is set. Either one is
// enough.
func security(mode string) (a2a.NamedSecuritySchemes, []a2a.SecurityRequirements) {
	if mode == "none" || mode == "" {
		return nil, nil
	}
	schemes := a2a.NamedSecuritySchemes{}
	var reqs []a2a.SecurityRequirements
	bearer := a2a.HTTPAuthSecurityScheme{Scheme: "bearer", Description: "Authorization: Bearer with the server's credential"}
	if strings.HasPrefix(mode, "jwt") || mode == "jwks" {
		bearer.BearerFormat = "JWT"
		bearer.Description = "Authorization: Bearer with a JWT the server verifies (or the service key)"
	}
	schemes[schemeBearer] = bearer
	reqs = append(reqs, a2a.SecurityRequirements{schemeBearer: {}})
	if strings.HasSuffix(mode, "api-key") {
		schemes[schemeAPIKey] = a2a.APIKeySecurityScheme{In: a2a.APIKeySecuritySchemeInHeader, Name: "X-Api-Key", Description: "the service key (DAWN_API_KEY)"}
		reqs = append(reqs, a2a.SecurityRequirements{schemeAPIKey: {}})
	}
	return schemes, reqs
}
