// Package e2e holds end-to-end tests that drive the whole product over real
// HTTP and SSE against @copilotkit/aimock, a mock of the OpenAI wire protocol.
// It has no code of its own besides tests, and nothing may import it.
package e2e
