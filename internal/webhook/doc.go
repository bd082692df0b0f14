// Package webhook delivers the POST a run request's webhook URL asks for
// when the run ends or parks for a person: it checks the URL when the
// request comes (http or https only, and no loopback, link-local or
// private address unless the allow-list lets it through), signs the body
// with HMAC-SHA256, checks every address again when it dials (so a host
// whose DNS answer changes cannot reach a refused address), retries with
// exponential backoff, and keeps how each delivery went.
package webhook
