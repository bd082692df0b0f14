package dialect

// WebhookRow is a webhook delivery as stored (table webhook_deliveries).
// Times are Unix nanoseconds; NextAt is when the next attempt is due, or
// while ClaimedBy (an owner pk, 0 for none) sends one, when the claim may
// be looked at again. Payload is the body's JSON, without the time it is
// sent at.
type WebhookRow struct {
	RunID, ThreadID, URL, Payload string
	ThreadPK                      int64
	Status                        string
	Attempts, MaxAttempts, Code   int
	Error                         string
	NextAt, ClaimedBy             int64
	CreatedAt, UpdatedAt          int64
}

// WebhookColumns are the columns of a webhook row, in ScanWebhook's order.
const WebhookColumns = `run_id, thread, thread_id, url, payload, status, attempts, max_attempts, code, error,
	next_at, claimed_by, created_at, updated_at`

// WebhookPending is the status of a delivery with attempts still to make.
const WebhookPending = "pending"

// ScanWebhook scans a row of WebhookColumns; scan is the row's Scan.
func ScanWebhook(scan func(dest ...any) error) (WebhookRow, error) {
	var w WebhookRow
	err := scan(&w.RunID, &w.ThreadPK, &w.ThreadID, &w.URL, &w.Payload, &w.Status, &w.Attempts, &w.MaxAttempts, &w.Code, &w.Error,
		&w.NextAt, &w.ClaimedBy, &w.CreatedAt, &w.UpdatedAt)
	return w, err
}

// ScanWebhooks reads every row of WebhookColumns.
func ScanWebhooks(rows Rows) ([]WebhookRow, error) {
	var out []WebhookRow
	for rows.Next() {
		w, err := ScanWebhook(rows.Scan)
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, rows.Err()
}

// WebhookValues are w's values in WebhookColumns' order.
func WebhookValues(w WebhookRow) []any {
	return []any{w.RunID, w.ThreadPK, w.ThreadID, w.URL, w.Payload, w.Status, w.Attempts, w.MaxAttempts, w.Code, w.Error,
		w.NextAt, w.ClaimedBy, w.CreatedAt, w.UpdatedAt}
}
