package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

func newUsersCmd(cfg *Config) *cobra.Command {
	var f approvalsFlags
	cmd := &cobra.Command{
		Use:   "users",
		Short: "Act on a server's users: forget one",
		Long: `users acts on the people a server keeps data for. It talks to the server at
--url with --key (default $DAWN_API_KEY), which must be the service
credential.`,
		Args: cobra.NoArgs,
	}
	cmd.PersistentFlags().StringVar(&f.url, "url", "http://127.0.0.1:8000", "the server (http://host:port)")
	cmd.PersistentFlags().StringVar(&f.key, "key", "", "the service credential (default $DAWN_API_KEY)")
	forget := &cobra.Command{
		Use:   "forget ID",
		Short: "Erase everything a user owns: threads, runs, files, crons, store items, memories",
		Long: `forget erases everything the user ID owns on the server and every replica
sharing its store: their threads with runs, events, checkpoints, files and
stored tool outputs, queued runs, crons, Store items and memories,
remembered approvals and webhook records. Their runs in flight are stopped
first. The audit log keeps one entry: who asked, when, and how many rows of
each kind were erased. Forgetting someone twice erases nothing the second
time.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(args[0]) == "" {
				return fmt.Errorf("users forget: name the user to forget, like dawn users forget ada@example.com")
			}
			body, err := serverCall(cmd.Context(), cfg, f, http.MethodDelete, "/users/"+url.PathEscape(args[0])+"/data", nil)
			if err != nil {
				return err
			}
			return printForgotten(cmd, args[0], body, f.url)
		},
	}
	cmd.AddCommand(forget)
	return cmd
}

// printForgotten prints what the server erased, by table.
func printForgotten(cmd *cobra.Command, user string, body []byte, server string) error {
	var out struct {
		Counts      map[string]int `json:"counts"`
		StoppedRuns int            `json:"stopped_runs"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return fmt.Errorf("--url %s: the answer is not what a forget answers: %w", server, err)
	}
	total := 0
	var parts []string
	for table, n := range out.Counts {
		total += n
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", table, n))
		}
	}
	slices.Sort(parts)
	w := cmd.OutOrStdout()
	if total == 0 {
		fmt.Fprintf(w, "forgot %s: nothing was left\n", user)
		return nil
	}
	fmt.Fprintf(w, "forgot %s: %d rows erased (%s); %d runs in flight stopped\n", user, total, strings.Join(parts, ", "), out.StoppedRuns)
	return nil
}
