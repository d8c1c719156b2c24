package runpage

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"sync"
)

//go:embed page.html.tmpl
var pageText string

// pageTemplate is parsed on first use, not at start-up: most commands
// never write a run page.
var pageTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page").Funcs(template.FuncMap{
		"f1": func(v float64) string { return fmt.Sprintf("%.1f", v) },
	}).Parse(pageText))
})

// Write renders p as one HTML document.
func Write(w io.Writer, p Page) error {
	return pageTemplate().Execute(w, p)
}
