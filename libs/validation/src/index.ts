export * from './validation.pipe';
export { Checked, IsNumberField, isRecord, numberIssues, stringIssues, type NumberRule, composeDecorators, IsOneOf, IsStringField, NestedObject, type StringRule, arrayIssues, IsArrayField, IsBooleanField, IsObjectField, ArrayOfVariants, documentedField, eachItemIssues, instanceIssues, unknownVariant, VariantModels, variantsSchema, type FieldDoc, ObjectOf, ObjectOfVariants, plainIssues, NullMeansAbsent, IsStringMapField } from './field-validators';
export { describeWrongType, describeWrongValue, expectedOneOf, quoteList, relativeIssueLine, validationIssues, type ValidationIssue, describeValue, BODY_VALIDATION_PREFIX } from './validation-issues';
export { IsListField, MayBeOmitted, NestedList, oneOfIssues, untransformableErrors, wordUnknownFields, type ListRule } from './catalogue-validators';
export { acceptDto, compiledValidation, type DtoClass } from './dto-acceptor';
export { RefusesUnknownFields, type UnservedField, refusedFieldOf } from './unknown-fields';
export { anyValue, arrayField, field, integerField, messageProblem, numberField, objectField, optional, recordField, stringField, type MessageOf } from './message-schema';
