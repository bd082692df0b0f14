package langgraph

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/router"
)

// An assistant's config.configurable and context, and a run's, may set
// what a route allows a run to change (runner.Overrides):
//   - model: a model name such as "openai:gpt-4o-mini";
//   - temperature: 0 to 2;
//   - tools: the names of the route's tools the model may call;
//   - a route param by name (tenant for /support/[tenant]), which the
//     prompt template reads as {{ .Params.tenant }};
//
// and config.recursion_limit caps the run's LangGraph steps: a model turn
// and its tools step are two, so the turn limit is half of it, rounded
// up. Other keys are kept as the client sent them and change nothing.
// A value a route does not allow is a 400 naming the field.

// layer is one source of overrides, and where a client set it.
type layer struct {
	where  string // "config.configurable", "context", "assistant <id> config.configurable"...
	values map[string]any
}

// readLayer reads the overrides of one layer into o, and reports a value
// of the wrong type, naming the field.
func readLayer(r *router.Route, l layer, o *runner.Overrides) error {
	for key, v := range l.values {
		field := l.where + "." + key
		switch {
		case key == "model":
			name, ok := v.(string)
			if !ok {
				return wire.BadBody(field + ` must be a model name such as "openai:gpt-4o-mini"`)
			}
			o.Model = name
		case key == "temperature":
			t, ok := v.(float64)
			if !ok {
				return wire.BadBody(field + " must be a number from 0 to 2")
			}
			o.Temperature = &t
		case key == "tools":
			list, ok := v.([]any)
			names := []string{}
			for _, item := range list {
				name, isName := item.(string)
				ok = ok && isName
				names = append(names, name)
			}
			if !ok {
				return wire.BadBody(field + ` must be a list of tool names of route ` + r.ID + `, such as ["writeTodos"]`)
			}
			o.Tools = names
		case slices.Contains(r.Params, key):
			if _, ok := v.(string); !ok {
				return wire.BadBody(field + " must be a string: it is the route param [" + key + "] of " + r.ID)
			}
		}
	}
	return nil
}

// recursionLimit reads config.recursion_limit into o.
func recursionLimit(where string, raw any, o *runner.Overrides) error {
	if raw == nil {
		return nil
	}
	n, ok := raw.(float64)
	if !ok || n < 1 || n != math.Trunc(n) || n > math.MaxInt32 {
		return wire.BadBody(fmt.Sprintf("%s.recursion_limit must be a whole number of steps above 0, not %v", where, raw))
	}
	o.MaxTurns = (int(n) + 1) / 2
	return nil
}

// checkLayers reads layers in order, each over the ones before, and
// checks each against the route, naming the field of the first value it
// does not allow.
func checkLayers(a *app.App, r *router.Route, layers []layer, configs []layerConfig) (runner.Overrides, error) {
	p, ok := a.Routes[r.ID]
	if !ok {
		return runner.Overrides{}, &app.BrokenRouteError{Route: r.ID}
	}
	var o runner.Overrides
	check := func(where string, lo runner.Overrides) error {
		err := lo.Check(p)
		var oe *runner.OverrideError
		if errors.As(err, &oe) {
			field := where + "." + oe.Field
			if oe.Field == "max_turns" {
				field = where + ".recursion_limit"
			}
			return wire.BadBody(field + ": " + oe.Msg + " (route " + r.ID + ")")
		}
		return err
	}
	for _, c := range configs {
		var lo runner.Overrides
		if err := recursionLimit(c.where, c.recursion, &lo); err != nil {
			return o, err
		}
		if err := check(c.where, lo); err != nil {
			return o, err
		}
		if lo.MaxTurns > 0 {
			o.MaxTurns = lo.MaxTurns
		}
	}
	for _, l := range layers {
		var lo runner.Overrides
		if err := readLayer(r, l, &lo); err != nil {
			return o, err
		}
		if err := check(l.where, lo); err != nil {
			return o, err
		}
		o = merged(o, lo)
	}
	return o, nil
}

// layerConfig is a config's recursion_limit and where it was set.
type layerConfig struct {
	where     string
	recursion any
}

// merged is o with what over sets over it.
func merged(o, over runner.Overrides) runner.Overrides {
	if over.Model != "" {
		o.Model = over.Model
	}
	if over.Temperature != nil {
		o.Temperature = over.Temperature
	}
	if over.Tools != nil {
		o.Tools = over.Tools
	}
	if over.MaxTurns > 0 {
		o.MaxTurns = over.MaxTurns
	}
	return o
}

// configLayers splits a config object (as stored or sent) into its
// configurable layer and its recursion_limit.
func configLayers(where string, config map[string]any) (layer, layerConfig) {
	configurable, _ := config["configurable"].(map[string]any)
	return layer{where: where + ".configurable", values: configurable}, layerConfig{where: where, recursion: config["recursion_limit"]}
}

// checkAssistantConfig checks the config and context an assistant of
// route r is created or updated with.
func (s *dialect) checkAssistantConfig(r *router.Route, config, context json.RawMessage) error {
	var cfg, ctx map[string]any
	if !isNull(config) && (json.Unmarshal(config, &cfg) != nil || cfg == nil) {
		return wire.BadBody("config must be a JSON object like {\"configurable\": {\"model\": \"openai:gpt-4o-mini\"}}")
	}
	if _, ok := cfg["configurable"]; ok {
		if _, isObject := cfg["configurable"].(map[string]any); !isObject {
			return wire.BadBody("config.configurable must be a JSON object")
		}
	}
	if !isNull(context) && (json.Unmarshal(context, &ctx) != nil || ctx == nil) {
		return wire.BadBody("context must be a JSON object")
	}
	return checkConfigMaps(s.host.App(), r, "config", "context", cfg, ctx)
}

// checkConfigMaps checks a config and context of route r, set where
// configWhere and contextWhere say.
func checkConfigMaps(a *app.App, r *router.Route, configWhere, contextWhere string, cfg, ctx map[string]any) error {
	l, lc := configLayers(configWhere, cfg)
	_, err := checkLayers(a, r, []layer{l, {where: contextWhere, values: ctx}}, []layerConfig{lc})
	return err
}

// runOverrides are the overrides of a run of assistant as with the run
// request body: the assistant's, then the run's own over them.
func (s *dialect) runOverrides(as lgAssistant, body lgRunBody) (runner.Overrides, error) {
	asWhere, asContextWhere := "config", "context"
	switch {
	case as.stored:
		asWhere, asContextWhere = "assistant "+as.AssistantID+" config", "assistant "+as.AssistantID+" context"
	case s.defaults[as.GraphID].config != nil:
		asWhere, asContextWhere = envConfigVar+"."+as.GraphID, envConfigVar+"."+as.GraphID+".context"
	}
	asLayer, asConfig := configLayers(asWhere, as.Config)
	asContext := layer{where: asContextWhere, values: as.Context}
	runConfig := layerConfig{where: "config", recursion: body.Config.RecursionLimit}
	return checkLayers(s.host.App(), as.route,
		[]layer{asLayer, asContext, {where: "config.configurable", values: body.Config.Configurable}, {where: "context", values: body.Context}},
		[]layerConfig{asConfig, runConfig})
}
