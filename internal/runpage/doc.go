// Package runpage renders one run as a self-contained HTML page: a health
// and coverage banner, a timeline of processes, tool calls and event
// density, filterable tables of files, programs and endpoints, and the
// join of each tool call to the kernel events inside it. The page has no
// external assets; Build computes the data (model.go) and Write renders
// it with html/template (page.go, page.html.tmpl).
package runpage
