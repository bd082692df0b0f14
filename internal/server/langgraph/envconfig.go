package langgraph

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/dawn-go/dawn/internal/server/wire"
)

// envConfigVar is the environment variable LangGraph's server reads the
// config of its graphs' default assistants from: a JSON object of graph
// id to config, such as {"agent": {"configurable": {"model": "openai:gpt-4o"}}},
// whose "context" member is the assistant's context.
const envConfigVar = "LANGGRAPH_CONFIG"

// envDefault is the config and context LANGGRAPH_CONFIG gives the default
// assistant of one graph.
type envDefault struct {
	config  map[string]any
	context map[string]any
}

// envDefaults are LANGGRAPH_CONFIG's entries by graph name ("agent" for
// /agent, however the variable names it).
type envDefaults map[string]envDefault

// parseEnvDefaults reads LANGGRAPH_CONFIG's value; "" is none.
func parseEnvDefaults(raw string) (envDefaults, error) {
	if raw == "" {
		return nil, nil
	}
	var entries map[string]map[string]any
	if err := json.Unmarshal([]byte(raw), &entries); err != nil {
		return nil, err
	}
	out := envDefaults{}
	for graph, entry := range entries {
		config := maps.Clone(entry)
		if config == nil {
			config = map[string]any{}
		}
		context, _ := config["context"].(map[string]any)
		delete(config, "context")
		if context == nil {
			context = map[string]any{}
		}
		out[graphName(graph)] = envDefault{config: config, context: context}
	}
	return out, nil
}

// readEnvDefaults reads LANGGRAPH_CONFIG from the host's environment and
// checks each entry against the app: what is wrong is logged at start,
// naming the variable, the graph and the field, and a run of that default
// assistant is refused with the same message until it is fixed.
func readEnvDefaults(h wire.Host) envDefaults {
	d, err := parseEnvDefaults(h.Env(envConfigVar))
	log := h.Logger()
	if err != nil {
		log.Error(envConfigVar+` must be a JSON object of graph id to config, such as {"agent": {"configurable": {"model": "openai:gpt-4o-mini"}}}; the default assistants keep their routes' files`, "error", err)
		return nil
	}
	a := h.App()
	for _, graph := range slices.Sorted(maps.Keys(d)) {
		r, _, ferr := findAssistant(a, graph)
		if ferr != nil {
			log.Warn(envConfigVar+" names graph "+graph+", which is no route of the app; rename the entry to a route (GET /routes lists them)", "graph", graph)
			continue
		}
		e := d[graph]
		if err := checkConfigMaps(a, r, envConfigVar+"."+graph, envConfigVar+"."+graph+".context", e.config, e.context); err != nil {
			log.Warn(err.Error(), "graph", graph)
		}
	}
	return d
}
