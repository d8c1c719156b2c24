package runpage

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
)

//go:embed page.html.tmpl
var pageText string

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"f1": func(v float64) string { return fmt.Sprintf("%.1f", v) },
}).Parse(pageText))

// Write renders p as one HTML document.
func Write(w io.Writer, p Page) error {
	return pageTemplate.Execute(w, p)
}
