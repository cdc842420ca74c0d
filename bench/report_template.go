package bench

import "html/template"

// reportTemplate is the whole report page. Everything is inline; nothing
// may refer to a URL.
var reportTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Felix bench report</title>
<style>
body { font-family: sans-serif; margin: 24px; color: #24292f; max-width: 1100px; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 32px; }
table { border-collapse: collapse; font-size: 12px; margin: 8px 0; }
th, td { padding: 3px 8px; border-bottom: 1px solid #d0d7de; white-space: nowrap; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
tr.baseline td { color: #57606a; }
.note { color: #57606a; font-size: 12px; }
svg.chart { display: block; margin: 12px 0; background: #fff; }
details { margin: 4px 0 16px; font-size: 12px; }
</style>
</head>
<body>
<h1>Felix bench report</h1>
<p class="note">Measured {{.Generated}}.</p>
{{range .Machines}}<p>Machine: {{.}}</p>
{{end}}
<h2>Results</h2>
<table>
<tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr{{if .Baseline}} class="baseline"{{end}}>{{range $j, $cell := .Cells}}<td{{if ge $j 2}} class="n"{{end}}>{{$cell}}</td>{{end}}</tr>
{{end}}</table>
<p class="note">(x) = figure / baseline: for records/s and MB/s the share of the raw limit reached, for latencies how many times the raw latency. Baselines are raw limits measured in the same run.</p>
{{if .Throughput}}<h2>Throughput</h2>
<p class="note">Each group is drawn to its own scale: a result and its baselines compare; different groups do not share an axis.</p>
{{range .Throughput}}{{.}}{{end}}{{end}}
{{if .Latency}}<h2>Latency distribution</h2>
<p class="note">Percentile curves from HdrHistograms (three significant digits); x is 1/(1-q) on a log scale, so the tail gets the room. Latency is measured from each request's intended send time in open-loop runs.</p>
{{range .Latency}}{{.Chart}}
<details><summary>numbers behind the {{.Workload}} chart</summary>
{{range .Curves}}<table><tr><th colspan="3">{{.Name}}</th></tr><tr><th>percentile</th><th>1/(1-q)</th><th>latency</th></tr>
{{range .Points}}<tr><td class="n">{{index . 0}}</td><td class="n">{{index . 1}}</td><td class="n">{{index . 2}}</td></tr>
{{end}}</table>
{{end}}</details>
{{end}}{{end}}
</body>
</html>
`))
