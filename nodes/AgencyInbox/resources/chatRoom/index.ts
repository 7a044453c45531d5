import type { INodeProperties } from 'n8n-workflow';

import { operationSelector } from '../../shared/descriptions';
import { chatRoomGetAllOperation, chatRoomGetAllProperties } from './getAll';

export const chatRoomDescription: INodeProperties[] = [
	operationSelector('chatRoom', [chatRoomGetAllOperation], 'getAll'),
	...chatRoomGetAllProperties,
];
