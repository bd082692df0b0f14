// Package inspector owns the dev server's web page: a small embedded
// HTML/CSS/JS client of the public HTTP API that shows routes, the live plan
// card, the tool timeline and the answer: the page sees only what any HTTP
// client sees.
package inspector
