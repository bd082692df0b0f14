package runner

import (
	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/agent"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/tmc/langchaingo/llms"
)

// agentConfig is the agent loop's configuration for a run of route p with
// params on model (named spec): the app's limits and settings.
func (m *Manager) agentConfig(a *app.App, p *capabilities.Prepared, params map[string]string, model llms.Model, spec string, streamText bool) agent.Config {
	limits := a.Config.Limits.WithDefaults()
	cfg := agent.Config{
		Route:          p,
		Params:         params,
		Model:          model,
		ModelName:      spec,
		AppMaxTurns:    limits.MaxTurns,
		AppTemperature: a.Config.Temperature,
		Stream:         streamText,
		MaxDepth:       limits.SubagentDepth,
		MaxToolOutput:  limits.ToolOutputBytes,
		ToolTimeout:    a.Config.Tools.Timeout,
		Park:           true,
		RecordStarted:  a.Config.Runs.ContinueOrphans,
	}
	if m.tel != nil {
		cfg.Tracer = m.tel
	}
	return cfg
}
