package main

import "os"

// notifyReload reports that Windows has no reload signal: the scraper
// reloads when its configuration file changes.
func notifyReload(chan os.Signal) bool { return false }
