import { assetsIssues, jevQuestions, jevQuestionsIssues, lunaInputIssues, lunaQuestionsIssues, stateIssues, unreferencedAssets } from './decision-questions';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]).toString('base64');
const options = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`o${i}`, `option ${i}`]));

describe('decision request bounds', () => {
  it.each([
    [{ q: { type: 'noul', instructions: 'Spam?' } }, []],
    [{ q: { type: 'choice', instructions: 'Which?', criteria: options(255) } }, []],
    [{ q: { type: 'choice', instructions: 'Which?', criteria: options(256) } }, ['.q.criteria: Expected 2 to 255 options. Received 256']],
    [{ q: { type: 'choice', instructions: 'Which?', criteria: options(1) } }, ['.q.criteria: Expected 2 to 255 options. Received 1']],
    [{ q: { type: 'score', instructions: 'How?', criteria: Array.from({ length: 11 }, () => 'x') } }, ['.q.criteria: Expected 2 to 10 levels. Received 11']],
    [{ q: { type: 'score', instructions: 'How?', criteria: { a: 'b' } } }, ['.q.criteria: Expected an array of level descriptions, lowest first. Received object']],
    [{ q: { type: 'yesno', instructions: 'x' } }, [".q.type: Expected one of 'noul', 'choice', 'score', 'box'. Received 'yesno'"]],
    [{ q: { type: 'noul' } }, ['.q.instructions: Expected a non-empty string. Received nothing']],
    [{ 'bad name': { type: 'noul', instructions: 'x' } }, ["Expected question names of 1-64 letters, digits, underscores or dashes. Received 'bad name'"]],
    [Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`q${i}`, { type: 'noul', instructions: 'x' }])), ['Expected 1 to 64 questions. Received 65']],
  ])('Jev questions %#', (questions, issues) => {
    expect(jevQuestionsIssues(questions)).toEqual(issues);
  });

  it('checks Luna questions, names unique, choices and levels bounded', () => {
    expect(lunaQuestionsIssues([{ name: 'a', type: 'predicate' }, { name: 'b', type: 'choice', choices: [{ value: 'x' }, { value: 'y' }] }])).toEqual([]);
    expect(lunaQuestionsIssues([{ name: 'a', type: 'noul' }])).toEqual(["[0].type: Expected one of 'predicate', 'choice', 'score'. Received 'noul'"]);
    expect(lunaQuestionsIssues([{ name: 'a', type: 'predicate' }, { name: 'a', type: 'predicate' }])).toEqual(["[1].name: Expected a name no other question has. Received 'a' again"]);
    expect(lunaQuestionsIssues([{ name: 'a', type: 'score', levels: [{ label: 'x' }] }])).toEqual(['[0].levels: Expected 2 to 10 levels. Received 1']);
  });

  it('takes only image assets of known formats whose bytes match, and refuses audio and video', () => {
    expect(assetsIssues({ photo: { type: 'image', format: 'png', data_base64: PNG } })).toEqual([]);
    expect(assetsIssues({ clip: { type: 'audio', format: 'mp3', data_base64: 'AAAA' } })).toEqual([".clip.type: Expected 'image': decision models take no audio. Received 'audio'"]);
    expect(assetsIssues({ clip: { type: 'video', format: 'mp4', data_base64: 'AAAA' } })).toEqual([".clip.type: Expected 'image': decision models take no video. Received 'video'"]);
    expect(assetsIssues({ photo: { type: 'image', format: 'tiff', data_base64: PNG } })).toEqual([".photo.format: Expected one of 'png', 'jpeg', 'webp', 'gif'. Received 'tiff'"]);
    expect(assetsIssues({ photo: { type: 'image', format: 'jpeg', data_base64: PNG } })).toEqual(['.photo.data_base64: Expected jpeg image data. Received bytes that do not start as a jpeg file does']);
    expect(assetsIssues({ photo: { type: 'image', format: 'png', data_base64: 'not base64!' } })[0]).toMatch(/^\.photo\.data_base64: Expected base64 image data/);
    const huge = 'A'.repeat(Math.ceil((4 * 1024 * 1024 + 3) / 3) * 4);
    expect(assetsIssues({ photo: { type: 'image', format: 'png', data_base64: huge } })).toEqual([`.photo.data_base64: Expected at most 4194304 bytes of image data. Received ${(huge.length / 4) * 3} bytes`]);
  });

  it('keeps images out of state and finds assets referenced by name', () => {
    expect(stateIssues('look at data:image/png;base64,AAAA')[0]).toMatch(/images go in assets/);
    expect(stateIssues(['a', 3])).toEqual(['[1]: Expected a string. Received number 3']);
    expect(unreferencedAssets('Is photo_1 blurry?', { photo_1: {}, photo_2: {} })).toEqual(['photo_2']);
    expect(unreferencedAssets({ images: ['photo_2'] }, { photo_2: {} })).toEqual([]);
  });

  it('refuses audio in Luna input and reads data URLs only', () => {
    expect(lunaInputIssues([{ role: 'user', content: [{ type: 'input_audio', input_audio: {} }] }])).toEqual([
      "[0].content[0].type: Expected 'input_text' or 'input_image': decision models take no audio, video or files. Received 'input_audio'",
    ]);
    expect(lunaInputIssues([{ role: 'user', content: [{ type: 'input_image', image_url: `data:image/png;base64,${PNG}` }] }])).toEqual([]);
    expect(lunaInputIssues([{ role: 'user', content: [{ type: 'input_image', image_url: 'https://example.com/a.png' }] }])[0]).toMatch(/^\[0\]\.content\[0\]\.image_url: Expected a data:image/);
  });

  it('turns Jev questions into the common form, options in their order', () => {
    expect(jevQuestions({ t: { type: 'choice', instructions: 'x', criteria: { b: 'B', a: 'A' } } })).toEqual([
      { name: 't', type: 'choice', instructions: 'x', options: [{ key: 'b', description: 'B' }, { key: 'a', description: 'A' }] },
    ]);
  });
});
