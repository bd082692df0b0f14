// Package webhook delivers the POST a run request's webhook URL asks for
// when the run ends or parks for a person: it checks the URL when the
// request comes (http or https only, and no loopback, link-local or
// private address unless the allow-list lets it through), signs the body
// with HMAC-SHA256, checks every address again when it dials (so a host
// whose DNS answer changes cannot reach a refused address), and sends
// the deliveries of the store's outbox (store.Webhook), one claimed
// attempt at a time, with exponential backoff, recording each outcome
// there so that any server carries on where another stopped.
package webhook
