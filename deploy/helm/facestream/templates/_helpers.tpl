{{/* The prefix of a command's environment variables: FACESTREAM_ALERT_STORE for alert-store. */}}
{{- define "facestream.envPrefix" -}}
FACESTREAM_{{ . | upper | replace "-" "_" }}
{{- end }}

{{- define "facestream.labels" -}}
app.kubernetes.io/name: facestream
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}

{{- define "facestream.bootstrap" -}}
{{- if .Values.kafka.strimzi.enabled -}}
{{ .Release.Name }}-kafka-bootstrap:9093
{{- else -}}
{{ required "kafka.bootstrap (an existing cluster), or kafka.strimzi.enabled" .Values.kafka.bootstrap }}
{{- end }}
{{- end }}

{{- define "facestream.databaseSecret" -}}
{{- if .Values.database.existingSecret -}}
{{ .Values.database.existingSecret }}
{{- else -}}
{{- $_ := required "database.url (the alert store's PostgreSQL), or database.existingSecret" .Values.database.url -}}
{{ .Release.Name }}-database
{{- end }}
{{- end }}
