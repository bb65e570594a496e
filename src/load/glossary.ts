/**
 * The one glossary of gw load's timings, with the names other tools give the same figures (vLLM's serving
 * benchmark, NVIDIA AIPerf, the OpenTelemetry GenAI client metrics): `gw load --help`, every text report (its
 * `glossary` field, the footnote of the table, the HTML report) and docs/load-report.md print this text.
 */
export const TIMING_GLOSSARY = `Timings (gw name: what it measures; the same figure in vLLM, AIPerf and OpenTelemetry GenAI):
  ttft  time to first token: from the request's start to the arrival of its first content event
        vLLM TTFT · AIPerf TTFT · OTel gen_ai.client.operation.time_to_first_chunk
  itl   inter-token latency: each gap between two content events of a stream
        vLLM ITL · AIPerf ICL (inter chunk latency) · OTel gen_ai.client.operation.time_per_output_chunk
  tpot  time per output token: (e2e - ttft) / (output tokens - 1), tokens from the gateway's usage
        vLLM TPOT · AIPerf ITL (inter token latency) · OTel: no client metric
  e2e   end to end: from the request's start to the end of its answer (successful requests)
        vLLM E2EL · AIPerf request latency · OTel gen_ai.client.operation.duration`;
