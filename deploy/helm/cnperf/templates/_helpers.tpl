{{/* The release's full name: the release name, with -cnperf unless it holds it. */}}
{{- define "cnperf.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 52 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 52 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Cluster-scoped names carry the namespace, so releases in two namespaces do not clash. */}}
{{- define "cnperf.clusterName" -}}
{{- printf "%s-%s" (include "cnperf.fullname" .) .Release.Namespace | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "cnperf.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "cnperf.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name: the ServiceAccount to run as, when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "cnperf.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "cnperf.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ default .Chart.AppVersion .Values.image.tag | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}
