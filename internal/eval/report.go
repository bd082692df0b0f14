package eval

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is the outcome of Run: pass rates per case and expectation, and
// every attempt.
type Report struct {
	Repeat   int          `json:"repeat"`
	Runs     int          `json:"runs"`
	Passed   int          `json:"passed"`
	PassRate float64      `json:"pass_rate"`
	Cases    []CaseReport `json:"cases"`
}

// CaseReport is one case's pass rates.
type CaseReport struct {
	Name         string              `json:"name"`
	Route        string              `json:"route"`
	File         string              `json:"file"`
	Line         int                 `json:"line"`
	Runs         int                 `json:"runs"`
	Passed       int                 `json:"passed"`
	PassRate     float64             `json:"pass_rate"`
	Expectations []ExpectationReport `json:"expectations"`
	Attempts     []Attempt           `json:"attempts"`
}

// ExpectationReport is one expectation's pass rate in a case, with the
// distinct reasons it failed.
type ExpectationReport struct {
	Name     string   `json:"name"`
	Runs     int      `json:"runs"`
	Passed   int      `json:"passed"`
	PassRate float64  `json:"pass_rate"`
	Failures []string `json:"failures,omitempty"`
}

// maxFailures bounds the distinct failure reasons kept per expectation.
const maxFailures = 3

func rate(passed, runs int) float64 {
	if runs == 0 {
		return 0
	}
	return float64(passed) / float64(runs)
}

func newReport(cases []Case, attempts [][]Attempt) *Report {
	r := &Report{Cases: make([]CaseReport, len(cases))}
	for i, c := range cases {
		cr := CaseReport{Name: c.Name, Route: c.Route, File: c.File, Line: c.Line, Attempts: attempts[i]}
		byName := map[string]*ExpectationReport{}
		for _, name := range resultNames(c.Expect.Names(), attempts[i]) {
			cr.Expectations = append(cr.Expectations, ExpectationReport{Name: name})
		}
		for k := range cr.Expectations {
			byName[cr.Expectations[k].Name] = &cr.Expectations[k]
		}
		for _, a := range attempts[i] {
			cr.Runs++
			if a.Pass() {
				cr.Passed++
			}
			for _, res := range a.Results {
				er := byName[res.Expectation]
				if er == nil {
					continue
				}
				er.Runs++
				if res.Pass {
					er.Passed++
				} else if !slices.Contains(er.Failures, res.Detail) && len(er.Failures) < maxFailures {
					er.Failures = append(er.Failures, res.Detail)
				}
			}
		}
		for k := range cr.Expectations {
			e := &cr.Expectations[k]
			e.PassRate = rate(e.Passed, e.Runs)
		}
		cr.PassRate = rate(cr.Passed, cr.Runs)
		r.Runs += cr.Runs
		r.Passed += cr.Passed
		r.Repeat = max(r.Repeat, cr.Runs)
		r.Cases[i] = cr
	}
	r.PassRate = rate(r.Passed, r.Runs)
	return r
}

// resultNames are the case's expectations, then the names of the other
// results its attempts have (a replay's).
func resultNames(names []string, attempts []Attempt) []string {
	for _, a := range attempts {
		for _, res := range a.Results {
			if !slices.Contains(names, res.Expectation) {
				names = append(names, res.Expectation)
			}
		}
	}
	return names
}

// WriteTable prints the pass rates: a line per case, then a line per
// expectation under it.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CASE\tEXPECTATION\tPASSED\tRATE")
	for _, c := range r.Cases {
		fmt.Fprintf(tw, "%s\t(all)\t%d/%d\t%s\n", c.Name+" ("+c.Route+")", c.Passed, c.Runs, percent(c.PassRate))
		for _, e := range c.Expectations {
			fmt.Fprintf(tw, "\t%s\t%d/%d\t%s\n", e.Name, e.Passed, e.Runs, percent(e.PassRate))
		}
	}
	fmt.Fprintf(tw, "TOTAL\t\t%d/%d\t%s\n", r.Passed, r.Runs, percent(r.PassRate))
	return tw.Flush()
}

func percent(f float64) string { return fmt.Sprintf("%.0f%%", f*100) }

// Below lists, for each case whose pass rate is below minPass, the case
// and each expectation that failed, with a reason.
func (r *Report) Below(minPass float64) []string {
	var out []string
	for _, c := range r.Cases {
		if c.PassRate >= minPass {
			continue
		}
		for _, e := range c.Expectations {
			if e.Passed == e.Runs {
				continue
			}
			reason := ""
			if len(e.Failures) > 0 {
				reason = ": " + e.Failures[0]
			}
			out = append(out, fmt.Sprintf("case %q (%s, %s:%d): %s passed %d/%d%s", c.Name, c.Route, c.File, c.Line, e.Name, e.Passed, e.Runs, reason))
		}
	}
	return out
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// JUnit XML, as CI systems read it: a testsuite per route, a testcase per
// attempt.
type (
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Time     string       `xml:"time,attr"`
		Suites   []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name     string      `xml:"name,attr"`
		Tests    int         `xml:"tests,attr"`
		Failures int         `xml:"failures,attr"`
		Time     string      `xml:"time,attr"`
		Cases    []junitCase `xml:"testcase"`
	}
	junitCase struct {
		Name      string        `xml:"name,attr"`
		ClassName string        `xml:"classname,attr"`
		Time      string        `xml:"time,attr"`
		Failure   *junitFailure `xml:"failure,omitempty"`
	}
	junitFailure struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	}
)

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// WriteJUnit writes the report as JUnit XML.
func (r *Report) WriteJUnit(w io.Writer) error {
	doc := junitSuites{Name: "dawn eval"}
	index := map[string]int{}
	var total time.Duration
	for _, c := range r.Cases {
		i, ok := index[c.Route]
		if !ok {
			i = len(doc.Suites)
			index[c.Route] = i
			doc.Suites = append(doc.Suites, junitSuite{Name: c.Route})
		}
		s := &doc.Suites[i]
		for _, a := range c.Attempts {
			jc := junitCase{Name: fmt.Sprintf("%s #%d", c.Name, a.N), ClassName: c.File, Time: seconds(a.Duration)}
			if f := failure(a); f != nil {
				jc.Failure = f
				s.Failures++
			}
			s.Tests++
			s.Cases = append(s.Cases, jc)
			total += a.Duration
		}
	}
	for i := range doc.Suites {
		s := &doc.Suites[i]
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		var d time.Duration
		for _, c := range r.Cases {
			if c.Route != s.Name {
				continue
			}
			for _, a := range c.Attempts {
				d += a.Duration
			}
		}
		s.Time = seconds(d)
	}
	doc.Time = seconds(total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// failure is the JUnit failure of an attempt, nil when it passed: the
// failed expectations, named in the message, with their reasons.
func failure(a Attempt) *junitFailure {
	var names, lines []string
	for _, res := range a.Results {
		if res.Pass {
			continue
		}
		names = append(names, res.Expectation)
		lines = append(lines, res.Expectation+": "+res.Detail)
	}
	if len(names) == 0 {
		return nil
	}
	return &junitFailure{Message: "failed: " + strings.Join(names, ", "), Type: names[0], Text: strings.Join(lines, "\n")}
}
