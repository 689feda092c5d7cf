import { DeepgramTranscriptionAdapter } from '../deepgram/deepgram.transcription';
import { StabilityImagesAdapter } from '../stability/stability.images';
import { openAiEditRefusal, toOpenAiImageEditForm, toOpenAiImagesRequest } from './openai.images';
import { toOpenAiSpeechRequest } from './openai.speech';
import { OpenAiTranscriptionAdapter, toOpenAiTranscriptionFields } from './openai.transcription';

const audio = { audio: Buffer.from('RIFF'), contentType: 'audio/wav' };
const png = (name: string) => ({ data: Buffer.from(name), contentType: 'image/png', filename: `${name}.png` });

describe("OpenAI's media requests", () => {
  it('sends a transcription its language, temperature and word timings; a translation neither language nor timings', () => {
    expect(toOpenAiTranscriptionFields({ ...audio, model: 'whisper-1', language: 'fr', temperature: 0.3 })).toEqual({
      model: 'whisper-1',
      response_format: 'verbose_json',
      language: 'fr',
      prompt: undefined,
      temperature: '0.3',
      'timestamp_granularities[]': ['word', 'segment'],
    });
    expect(toOpenAiTranscriptionFields({ ...audio, model: 'whisper-1', language: 'fr', task: 'translate', prompt: 'names' })).toEqual({
      model: 'whisper-1',
      response_format: 'verbose_json',
      language: undefined,
      prompt: 'names',
      temperature: undefined,
      'timestamp_granularities[]': undefined,
    });
  });

  it('translates with Whisper only, and never on Deepgram', () => {
    const openai = new OpenAiTranscriptionAdapter();
    expect(openai.translationRefusal('whisper-1')).toBeUndefined();
    expect(openai.translationRefusal('gpt-4o-transcribe')).toBe('gpt-4o-transcribe does not translate (only Whisper models do)');
    expect(new DeepgramTranscriptionAdapter().translationRefusal('nova-3')).toBe('Deepgram has no translation API (nova-3 transcribes only)');
  });

  it('sends speaking instructions to OpenAI', () => {
    expect(toOpenAiSpeechRequest({ model: 'gpt-4o-mini-tts', text: 'Hi', format: 'mp3', instructions: 'Slowly.' })).toEqual({ model: 'gpt-4o-mini-tts', input: 'Hi', voice: 'alloy', response_format: 'mp3', instructions: 'Slowly.' });
  });

  it('asks DALL·E for a URL only when the client wants one, and never sends response_format to GPT Image', () => {
    expect(toOpenAiImagesRequest({ model: 'dall-e-3', prompt: 'p', responseFormat: 'url' }).response_format).toBe('url');
    expect(toOpenAiImagesRequest({ model: 'dall-e-3', prompt: 'p' }).response_format).toBe('b64_json');
    expect(toOpenAiImagesRequest({ model: 'gpt-image-1', prompt: 'p', responseFormat: 'url' })).not.toHaveProperty('response_format');
  });

  it('sends one image as image, several as image[], the mask as mask, the fields as text', () => {
    const one = toOpenAiImageEditForm({ model: 'gpt-image-1', prompt: 'a hat', n: 2, size: '1024x1024', images: [png('a')], mask: png('m') });
    expect(one.fields).toEqual({ model: 'gpt-image-1', prompt: 'a hat', n: '2', size: '1024x1024' });
    expect(one.files.map((file) => [file.field, file.filename])).toEqual([
      ['image', 'a.png'],
      ['mask', 'm.png'],
    ]);
    const two = toOpenAiImageEditForm({ model: 'dall-e-2', prompt: 'x', images: [png('a'), png('b')] });
    expect(two.fields).toEqual({ model: 'dall-e-2', prompt: 'x', response_format: 'b64_json' });
    expect(two.files.map((file) => file.field)).toEqual(['image[]', 'image[]']);
  });

  it('edits with GPT Image and DALL·E 2, not DALL·E 3', () => {
    expect(openAiEditRefusal('gpt-image-1')).toBeUndefined();
    expect(openAiEditRefusal('dall-e-2')).toBeUndefined();
    expect(openAiEditRefusal('dall-e-3')).toBe('dall-e-3 has no image edit API (GPT Image and DALL·E 2 models edit)');
  });
});

describe("Stability's edits", () => {
  it('edit one image at a time, before anything is sent', async () => {
    const target = { provider: 'stability', baseUrl: 'http://127.0.0.1:9', model: 'core' } as never;
    await expect(new StabilityImagesAdapter().edit(target, { model: 'core', prompt: 'x', images: [png('a'), png('b')] }, { timeoutMs: 1_000 })).rejects.toMatchObject({
      message: expect.stringContaining('Stability edits one image at a time'),
    });
  });
});
