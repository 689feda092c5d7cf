/** What audio of unknown length is assumed to be when nobody can tell: 128 kbit/s, a typical MP3 of speech. */
export const ESTIMATED_AUDIO_BYTES_PER_SECOND = 16_000;

/**
 * The lowest bitrate of the speech codecs the providers take, 2 kbit/s: Speex narrowband's
 * lowest mode (2.15 kbit/s, in Ogg) rounded down, below AMR-NB (4.75), Opus (6) and MP3
 * (8, MPEG-2.5). No honest file of a given size lasts longer than its bytes at this rate, so a
 * provider's figure past it is not believed. Audio that goes below it (Opus pausing its frames
 * through long silence) is billed less than it lasts: the client is never billed more.
 */
export const LOWEST_AUDIO_BYTES_PER_SECOND = 250;

/**
 * The audio's length: the longer of the provider's figure and the one read from the file (a
 * header can understate what a decoder hears), either alone when only one is known, else
 * estimated from the size at 128 kbit/s.
 */
export function audioSeconds(reportedSeconds: number | undefined, measuredSeconds: number | undefined, bytes: number): number {
  if (reportedSeconds === undefined && measuredSeconds === undefined) return bytes / ESTIMATED_AUDIO_BYTES_PER_SECOND;
  return Math.max(reportedSeconds ?? 0, measuredSeconds ?? 0);
}

/** Whole seconds, rounded up (a started second counts), at least 1. */
export function billableSeconds(seconds: number): number {
  if (!Number.isFinite(seconds) || seconds <= 0) return 1;
  return Math.max(1, Math.ceil(seconds - 1e-9));
}

/** The most seconds `bytes` of audio can carry at the lowest bitrate, whole and at least 1. */
export function secondsTheBytesCanCarry(bytes: number): number {
  return billableSeconds(bytes / LOWEST_AUDIO_BYTES_PER_SECOND);
}

/**
 * The most a request may be billed, in whole seconds: `maxSeconds` (its `max_duration_seconds`,
 * at most STT_MAX_AUDIO_SECONDS, whose price admission held), and when the file's own length
 * could not be read, no more than its bytes can carry.
 */
export function heldAudioSeconds(maxSeconds: number, measuredSeconds: number | undefined, bytes: number): number {
  return measuredSeconds === undefined ? Math.min(maxSeconds, secondsTheBytesCanCarry(bytes)) : maxSeconds;
}

/**
 * The seconds billed: the audio's length (audioSeconds) in whole seconds, capped at the held
 * bound (heldAudioSeconds), whatever the provider reports.
 */
export function billedAudioSeconds(reportedSeconds: number | undefined, measuredSeconds: number | undefined, bytes: number, maxSeconds: number): number {
  return Math.min(billableSeconds(audioSeconds(reportedSeconds, measuredSeconds, bytes)), heldAudioSeconds(maxSeconds, measuredSeconds, bytes));
}
