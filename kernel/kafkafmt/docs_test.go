package kafkafmt

import (
	"os"
	"strings"
	"testing"
)

// defaultsMarkdown is the table of docs/kafka-import.md's defaults section.
func defaultsMarkdown() string {
	var b strings.Builder
	b.WriteString("| key | Kafka 4.0 default | scope | defined in | kgrepl setting (value) |\n|---|---|---|---|---|\n")
	for _, d := range Defaults {
		v := d.Value
		if d.Unit != "" && d.Unit != "records" {
			v += " " + d.Unit
		}
		setting := "-"
		if d.Setting != "" {
			setting = "`" + d.Setting + " " + d.SettingValue + "`"
		}
		b.WriteString("| " + d.Key + " | " + v + " | " + string(d.Scope) + " | " + shortClass(d.Class) + "." + d.Constant + " | " + setting + " |\n")
	}
	return b.String()
}

// TestDocsDefaultsTable: docs/kafka-import.md shows Defaults as they are
// (go test -rewrite writes the table into it).
func TestDocsDefaultsTable(t *testing.T) {
	const path = "../../docs/kafka-import.md"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- defaults: begin -->\n", "<!-- defaults: end -->"
	i, j := strings.Index(string(doc), begin), strings.Index(string(doc), end)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q ... %q section", path, begin, end)
	}
	want := string(doc[:i+len(begin)]) + defaultsMarkdown() + string(doc[j:])
	if *rewrite {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if string(doc) != want {
		t.Errorf("%s's defaults table is not Defaults (go test ./kernel/kafkafmt -rewrite writes it; read the diff)", path)
	}
}
