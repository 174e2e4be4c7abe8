package run

import "github.com/perfscope/perfscope/internal/fetch"

// Redacted replaces a secret that a run does not record.
const Redacted = fetch.Redacted

// RedactURL returns the URL s as a run records it (see fetch.RedactURL):
// query values, a fragment and a password replaced, the rest as given.
// Every URL a run records goes through it.
func RedactURL(s string) string { return fetch.RedactURL(s) }
