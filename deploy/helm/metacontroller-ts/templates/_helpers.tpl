{{/* The chart name, or nameOverride. */}}
{{- define "metacontroller-ts.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The full name: fullnameOverride, the release name when it contains the chart name, or <release>-<chart>. */}}
{{- define "metacontroller-ts.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- /* A release named after upstream's chart keeps upstream's names (metacontroller, metacontroller-0). */}}
{{- if or (contains $name .Release.Name) (and (not .Values.nameOverride) (contains "metacontroller" .Release.Name)) }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "metacontroller-ts.selectorLabels" -}}
app.kubernetes.io/name: {{ include "metacontroller-ts.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: engine
{{- end }}

{{- define "metacontroller-ts.labels" -}}
{{ include "metacontroller-ts.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end }}

{{- define "metacontroller-ts.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "metacontroller-ts.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* rbac.aggregationLabels as `key: "value"` pairs, for messages. */}}
{{- define "metacontroller-ts.aggregationSelector" -}}
{{- $pairs := list }}
{{- range $key, $value := .Values.rbac.aggregationLabels }}
{{- $pairs = append $pairs (printf "%s: %q" $key $value) }}
{{- end }}
{{- join ", " $pairs }}
{{- end }}

{{/* The namespace of every namespaced object: namespaceOverride, or the release namespace. */}}
{{- define "metacontroller-ts.namespace" -}}
{{- default .Release.Namespace .Values.namespaceOverride | trunc 63 | trimSuffix "-" }}
{{- end }}
