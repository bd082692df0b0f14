package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
)

// approvalsFlags are the flags every approvals subcommand takes.
type approvalsFlags struct {
	url, key string
}

func newApprovalsCmd(cfg *Config) *cobra.Command {
	var f approvalsFlags
	cmd := &cobra.Command{
		Use:   "approvals",
		Short: "List and revoke remembered approval decisions on a server",
		Long: `approvals lists the decisions a server remembers, such as a tool a person
allowed "always", and revokes them so that the next call asks again. It talks
to the server at --url with --key (default $DAWN_API_KEY) as the bearer
token: the service credential sees and revokes every user's decisions, a
user's token their own.`,
		Args: cobra.NoArgs,
	}
	cmd.PersistentFlags().StringVar(&f.url, "url", "http://127.0.0.1:8000", "the server (http://host:port)")
	cmd.PersistentFlags().StringVar(&f.key, "key", "", "the bearer token to send (default $DAWN_API_KEY)")
	list := &cobra.Command{
		Use:   "list",
		Short: "List remembered decisions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return listApprovals(cmd, cfg, f)
		},
	}
	var user string
	revoke := &cobra.Command{
		Use:   "revoke KEY",
		Short: "Forget a remembered decision (KEY as list shows it)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			q := ""
			if user != "" {
				q = "?user=" + url.QueryEscape(user)
			}
			_, err := serverCall(cmd.Context(), cfg, f, http.MethodDelete, "/approvals/"+url.PathEscape(args[0])+q, nil)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "revoked %s\n", args[0])
			return nil
		},
	}
	revoke.Flags().StringVar(&user, "user", "", "whose decision (the service credential only; default: the whole app's, or your own)")
	cmd.AddCommand(list, revoke)
	return cmd
}

// listApprovals prints the server's remembered decisions as a table.
func listApprovals(cmd *cobra.Command, cfg *Config, f approvalsFlags) error {
	body, err := serverCall(cmd.Context(), cfg, f, http.MethodGet, "/approvals", nil)
	if err != nil {
		return err
	}
	var out struct {
		Approvals []struct {
			Key   string          `json:"key"`
			User  string          `json:"user"`
			Value json.RawMessage `json:"value"`
		} `json:"approvals"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return fmt.Errorf("--url %s: the answer is not a list of approvals: %w", f.url, err)
	}
	if len(out.Approvals) == 0 {
		fmt.Fprintln(cmd.OutOrStdout(), "no remembered decisions")
		return nil
	}
	w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "USER\tKEY\tVALUE")
	for _, a := range out.Approvals {
		user := a.User
		if user == "" {
			user = "(app)"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", user, a.Key, a.Value)
	}
	return w.Flush()
}

// serverCall sends one request to the server, with body as JSON when not
// nil, and returns the body of a 2xx answer; any other answer is an error
// with the server's message. The approvals, memory and users commands
// share it.
func serverCall(ctx context.Context, cfg *Config, f approvalsFlags, method, path string, body []byte) ([]byte, error) {
	base := strings.TrimRight(f.url, "/")
	if u, err := url.Parse(base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--url %q: pass the server's address, like http://127.0.0.1:8000", f.url)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, base+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	key := f.key
	if key == "" {
		key = cfg.Env("DAWN_API_KEY")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("--url %s: %w", f.url, err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 == 2 {
		return answer, nil
	}
	var e struct {
		Error struct{ Message string } `json:"error"`
	}
	if json.Unmarshal(answer, &e) == nil && e.Error.Message != "" {
		return nil, appProblem(fmt.Errorf("%s %s: %d: %s", method, path, resp.StatusCode, e.Error.Message))
	}
	return nil, appProblem(errors.New(method + " " + path + ": " + resp.Status))
}
