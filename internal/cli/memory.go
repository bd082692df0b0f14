package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

// memoryFlags are the flags every memory subcommand takes.
type memoryFlags struct {
	approvalsFlags
	route, user, status string
}

func newMemoryCmd(cfg *Config) *cobra.Command {
	var f memoryFlags
	cmd := &cobra.Command{
		Use:   "memory",
		Short: "List, approve, reject, edit, forget and export a route's long-term memories on a server",
		Long: `memory governs the long-term memories of a route (memory: in its agent.md) on
the server at --url, with --key (default $DAWN_API_KEY) as the bearer token:
a user's token reaches that user's memories; the service credential the
app's, or a user's with --user. Candidates (writes: candidate) wait for
approve or reject before recall finds them.`,
		Args: cobra.NoArgs,
	}
	cmd.PersistentFlags().StringVar(&f.url, "url", "http://127.0.0.1:8000", "the server (http://host:port)")
	cmd.PersistentFlags().StringVar(&f.key, "key", "", "the bearer token to send (default $DAWN_API_KEY)")
	cmd.PersistentFlags().StringVar(&f.route, "route", "", "the route whose memories to reach, by its id (like /assistant)")
	cmd.PersistentFlags().StringVar(&f.user, "user", "", "whose memories (the service credential only; default: your own)")
	list := &cobra.Command{
		Use: "list", Short: "List memories and candidates", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return listMemories(cmd, cfg, f) },
	}
	list.Flags().StringVar(&f.status, "status", "", "approved or candidate (default: both)")
	export := &cobra.Command{
		Use: "export", Short: "Print every memory of the route as JSON, with who wrote and approved each", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			body, err := serverCall(cmd.Context(), cfg, f.approvalsFlags, http.MethodGet, "/memories/export?"+f.query().Encode(), nil)
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(body)
			return err
		},
	}
	cmd.AddCommand(list, export)
	for _, a := range []struct{ name, short string }{
		{"approve", "Approve a candidate: recall finds it from now on"},
		{"reject", "Reject a candidate: it is deleted"},
		{"forget", "Forget a memory (or a candidate)"},
	} {
		cmd.AddCommand(&cobra.Command{
			Use: a.name + " KEY", Short: a.short, Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error { return memoryAction(cmd, cfg, f, a.name, args[0], "") },
		})
	}
	cmd.AddCommand(&cobra.Command{
		Use: "edit KEY TEXT", Short: "Replace a memory's text", Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return memoryAction(cmd, cfg, f, "edit", args[0], args[1])
		},
	})
	return cmd
}

func (f memoryFlags) query() url.Values {
	q := url.Values{"route": {f.route}}
	if f.user != "" {
		q.Set("user", f.user)
	}
	if f.status != "" {
		q.Set("status", f.status)
	}
	return q
}

func (f memoryFlags) check() error {
	if f.route == "" {
		return fmt.Errorf("--route is required: name the route whose memories to reach, like --route /assistant")
	}
	return nil
}

// memoryAction posts one action (approve, reject, forget, edit) on key.
func memoryAction(cmd *cobra.Command, cfg *Config, f memoryFlags, action, key, text string) error {
	if err := f.check(); err != nil {
		return err
	}
	body, _ := json.Marshal(map[string]string{"route": f.route, "key": key, "text": text, "user": f.user})
	if _, err := serverCall(cmd.Context(), cfg, f.approvalsFlags, http.MethodPost, "/memories/"+action, body); err != nil {
		return err
	}
	past := map[string]string{"approve": "approved", "reject": "rejected", "forget": "forgot", "edit": "edited"}[action]
	fmt.Fprintf(cmd.OutOrStdout(), "%s %s\n", past, key)
	return nil
}

// listMemories prints a route's memories as a table.
func listMemories(cmd *cobra.Command, cfg *Config, f memoryFlags) error {
	if err := f.check(); err != nil {
		return err
	}
	body, err := serverCall(cmd.Context(), cfg, f.approvalsFlags, http.MethodGet, "/memories?"+f.query().Encode(), nil)
	if err != nil {
		return err
	}
	var out struct {
		Memories []struct {
			Key, Text, Status string
			WrittenBy         *struct{ User, Thread string } `json:"written_by"`
		} `json:"memories"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return fmt.Errorf("--url %s: the answer is not a list of memories: %w", f.url, err)
	}
	if len(out.Memories) == 0 {
		fmt.Fprintf(cmd.OutOrStdout(), "no memories for %s\n", f.route)
		return nil
	}
	w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "STATUS\tKEY\tWRITTEN IN\tTEXT")
	for _, m := range out.Memories {
		thread := "-"
		if m.WrittenBy != nil && m.WrittenBy.Thread != "" {
			thread = m.WrittenBy.Thread
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", m.Status, m.Key, thread, m.Text)
	}
	return w.Flush()
}
