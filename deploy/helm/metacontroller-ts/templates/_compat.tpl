{{/*
Upstream Metacontroller's chart values, read as upstream reads them (docs/deploy.md, "Migrating
from upstream's chart"), and the checks that refuse what this chart cannot honour: every value is
either used or refused with the value's name and what to use instead, never silently dropped.
*/}}

{{/* Every top-level value this chart reads; anything else fails the render. */}}
{{- define "metacontroller-ts.knownValues" -}}
replicas workload leaderElection sharding namespaceOverride image imagePullSecrets nameOverride fullnameOverride args extraArgs env ports resources serviceAccount rbac metrics podAnnotations podLabels priorityClassName podSecurityContext securityContext podDisruptionBudget topologySpreadConstraints serviceMonitor prometheusRule grafanaDashboard terminationGracePeriodSeconds nodeSelector tolerations affinity hostAliases command commandArgs probes clusterRole service global
{{- end }}

{{- define "metacontroller-ts.checkValues" -}}
{{- $known := splitList " " (include "metacontroller-ts.knownValues" .) }}
{{- range $key, $_ := .Values }}
{{- if not (has $key $known) }}
{{- fail (printf "value %q is not read by this chart (a typo, or a value of another chart); see values.yaml and docs/deploy.md for the values it reads" $key) }}
{{- end }}
{{- end }}
{{- if not (has .Values.workload (list "Deployment" "StatefulSet")) }}
{{- fail (printf "workload must be Deployment or StatefulSet, got %q" .Values.workload) }}
{{- end }}
{{- if and .Values.commandArgs (eq (first .Values.commandArgs | toString) "run") }}
{{- fail "commandArgs are flags of /usr/bin/metacontroller, as in upstream's chart: drop the leading \"run\", or give metactl's arguments in args instead" }}
{{- end }}
{{- range $key, $_ := .Values.probes }}
{{- if ne $key "port" }}
{{- fail (printf "probes.%s is not read: upstream's chart reads probes.port only (this chart's probes are fixed; set ports.health or probes.port)" $key) }}
{{- end }}
{{- end }}
{{- range $key, $_ := .Values.clusterRole }}
{{- if not (has $key (list "rules" "aggregationRule")) }}
{{- fail (printf "clusterRole.%s is not read: use clusterRole.rules (or rbac.extraRules) and clusterRole.aggregationRule.clusterRoleSelectors" $key) }}
{{- end }}
{{- end }}
{{- range $key, $_ := (.Values.clusterRole.aggregationRule | default dict) }}
{{- if ne $key "clusterRoleSelectors" }}
{{- fail (printf "clusterRole.aggregationRule.%s is not read: only clusterRoleSelectors is" $key) }}
{{- end }}
{{- end }}
{{- range $key, $_ := .Values.service }}
{{- if not (has $key (list "enabled" "ports")) }}
{{- fail (printf "service.%s is not read: upstream's service has enabled and ports (for this chart's metrics Service use metrics.service)" $key) }}
{{- end }}
{{- end }}
{{- end }}

{{/* The health port: upstream's probes.port when given, else ports.health. */}}
{{- define "metacontroller-ts.healthPort" -}}
{{- .Values.probes.port | default .Values.ports.health }}
{{- end }}

{{/*
The container's command and args. Ours: the image's `metactl run` with `args`. Upstream's, when
`command` or `commandArgs` is set: `command` (default /usr/bin/metacontroller, the engine with
upstream's bare flags) with `commandArgs` (default: `args`). Either way the leader-election or
sharding flags and `extraArgs` follow.
*/}}
{{- define "metacontroller-ts.commandAndArgs" -}}
{{- $upstream := or .Values.command .Values.commandArgs }}
{{- if $upstream }}
command:
  - {{ .Values.command | default "/usr/bin/metacontroller" | quote }}
{{- end }}
args:
  {{- if not $upstream }}
  - run
  {{- end }}
  {{- range (.Values.commandArgs | default .Values.args) }}
  - {{ . | quote }}
  {{- end }}
  {{- if .Values.leaderElection.enabled }}
  - --leader-election
  - {{ printf "--leader-election-id=%s" .Values.leaderElection.id | quote }}
  - {{ printf "--leader-election-lease-duration=%s" .Values.leaderElection.leaseDuration | quote }}
  - {{ printf "--leader-election-renew-deadline=%s" .Values.leaderElection.renewDeadline | quote }}
  - {{ printf "--leader-election-retry-period=%s" .Values.leaderElection.retryPeriod | quote }}
  {{- end }}
  {{- if .Values.sharding.enabled }}
  - --sharding
  - {{ printf "--sharding-ring=%s" .Values.sharding.ring | quote }}
  - {{ printf "--shard-key=%s" .Values.sharding.shardKey | quote }}
  - {{ printf "--sharding-lease-duration=%s" .Values.sharding.leaseDuration | quote }}
  - {{ printf "--sharding-renew-deadline=%s" .Values.sharding.renewDeadline | quote }}
  - {{ printf "--sharding-retry-period=%s" .Values.sharding.retryPeriod | quote }}
  - {{ printf "--sharding-server-side=%t" (ne .Values.sharding.serverSide false) | quote }}
  {{- end }}
  {{- range .Values.extraArgs }}
  - {{ . | quote }}
  {{- end }}
{{- end }}
