{{/* The release's objects' name: <release>-kafka-mirror, or the release name when it already says so. */}}
{{- define "kms.fullname" -}}
{{- if contains "kafka-mirror" .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-kafka-mirror" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/*
Selector labels. app.kubernetes.io/name is kafka-mirror whatever the release: the ServiceMonitor's
jobLabel makes it the scrape job, the job the alert rules expect (MIRROR_JOB in grafana/src/alerts.ts).
*/}}
{{- define "kms.selectorLabels" -}}
app.kubernetes.io/name: kafka-mirror
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "kms.labels" -}}
{{ include "kms.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "kms.secretName" -}}
{{- if .Values.secrets.existingSecret -}}
{{- .Values.secrets.existingSecret -}}
{{- else if .Values.secrets.stringData -}}
{{- include "kms.fullname" . }}-secrets
{{- end -}}
{{- end -}}

{{- define "kms.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "kms.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The configuration files of the mode, as the ConfigMap's data. */}}
{{- define "kms.configFiles" -}}
{{- if eq .Values.mode "mm2" -}}
mm2.properties: {{ required "mm2.properties is empty: set mm2.properties" .Values.mm2.properties | quote }}
{{- else if eq .Values.mode "mm1" -}}
consumer.properties: {{ required "mode mm1 needs mm1.consumerProperties" .Values.mm1.consumerProperties | quote }}
producer.properties: {{ required "mode mm1 needs mm1.producerProperties" .Values.mm1.producerProperties | quote }}
{{- else if eq .Values.mode "strimzi" -}}
kafkamirrormaker2.yaml: {{ required "mode strimzi needs strimzi.resource (the KafkaMirrorMaker2 YAML)" .Values.strimzi.resource | quote }}
{{- else -}}
{{- fail (printf "mode %q: expected mm2, mm1 or strimzi" .Values.mode) -}}
{{- end -}}
{{- end -}}
